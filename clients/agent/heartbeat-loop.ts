import type { HeartbeatResponse } from "../../shared/contract/index.js";
import type { Logger } from "../../shared/runtime/index.js";
import { Alarm } from "./alarm.js";
import type { AttemptTable } from "./attempt-table.js";
import { nodeKeyRefused, refusesCredential } from "./agent-error.js";
import { FailureStreak, isRetryable, retrying } from "./backoff.js";
import type { NodePlane } from "./node-plane.js";

export interface HeartbeatDeps {
  plane: NodePlane;
  attempts: AttemptTable;
  logger: Logger;
  /** The interval to keep until an answer says another (the registration's, or the service's default). */
  intervalMs: number;
  /** Told of a failure no retry mends; the loop has ended. */
  fail: (error: unknown) => void;
}

/**
 * The node's heartbeats: every `heartbeat_interval_seconds` (or at once when asked), each
 * listing the attempts the node runs; each answer stops the attempts it names and says
 * whether the service holds the node draining.
 */
export class Heartbeats {
  /** As the last answer said. */
  intervalMs: number;
  /** Whether the service holds the node draining, as the last answer said. */
  draining = false;
  readonly #alarm = new Alarm();

  constructor(private readonly deps: HeartbeatDeps) {
    this.intervalMs = deps.intervalMs;
  }

  /** Heartbeats now rather than at the interval (an attempt it runs ended on the service's side). */
  now(): void {
    this.#alarm.ring();
  }

  apply(reply: HeartbeatResponse): void {
    this.intervalMs = reply.heartbeat_interval_seconds * 1000;
    if (reply.draining !== this.draining)
      this.deps.logger.info(
        { draining: reply.draining },
        reply.draining ? "the node is draining" : "the node is no longer draining",
      );
    this.draining = reply.draining;
    for (const order of reply.stop) this.deps.attempts.get(order)?.stop(order.reason);
  }

  /**
   * The first heartbeat, which checks the node key before any work is taken: sent again
   * while a retry may help, until `halt` aborts. A refused key is an AgentError that says
   * what to do with the state file at `statePath`.
   */
  async first(halt: AbortSignal, statePath: string): Promise<void> {
    const { plane, logger } = this.deps;
    try {
      this.apply(
        await retrying(() => plane.heartbeat({ running: [] }, halt), { what: "heartbeat", logger, signal: halt }),
      );
    } catch (error) {
      if (!halt.aborted && refusesCredential(error)) throw nodeKeyRefused(error, statePath);
      throw error;
    }
  }

  /** Heartbeats until `signal` aborts, or a failure no retry mends. */
  async run(signal: AbortSignal): Promise<void> {
    const { plane, attempts, logger, fail } = this.deps;
    const streak = new FailureStreak(logger, "heartbeat");
    let delayMs = this.intervalMs;
    while (!signal.aborted) {
      await this.#alarm.wait(delayMs, signal);
      if (signal.aborted) return;
      try {
        this.apply(await plane.heartbeat({ running: attempts.listed() }, signal));
        streak.answered();
        delayMs = this.intervalMs;
      } catch (error) {
        if (signal.aborted) return;
        if (!isRetryable(error)) return fail(error);
        delayMs = streak.failed(error);
      }
    }
  }
}
