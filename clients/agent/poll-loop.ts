import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../../shared/runtime/index.js";
import type { AttemptTable } from "./attempt-table.js";
import { FailureStreak, isRetryable } from "./backoff.js";
import type { AgentAssignment, NodePlane } from "./node-plane.js";
import { attemptKey } from "./state-file.js";

/**
 * A long poll's wait while a slot is free: the poll names the attempts the node runs, and
 * the gateway answers as soon as another is assigned (or one of them is ended there).
 */
export const POLL_WAIT_SECONDS = 25;

export interface PollDeps {
  plane: NodePlane;
  attempts: AttemptTable;
  logger: Logger;
  slots: () => number;
  /** Whether the agent still takes new work (it runs, neither draining nor stopping). */
  taking: () => boolean;
  /** Starts an attempt a poll delivered, unless the node runs or ran it already. */
  start: (job: AgentAssignment) => void;
  /** Heartbeats at once: an attempt the node runs was ended by the service. */
  heartbeatNow: () => void;
  /** Told of a failure no retry mends; the loop has ended. */
  fail: (error: unknown) => void;
}

/**
 * While a slot is free, one long poll at a time that names the attempts the node knows;
 * each attempt it delivers is started. Ends when `signal` aborts (a poll in flight is
 * cut), when the agent takes no more work, or on a failure no retry mends.
 */
export async function pollLoop(deps: PollDeps, signal: AbortSignal): Promise<void> {
  const { plane, attempts, logger } = deps;
  const streak = new FailureStreak(logger, "poll");
  /** What the last answer listed: a finished attempt the service still holds stays known, or it would be news each time. */
  let listed = new Set<string>();
  while (!signal.aborted && deps.taking()) {
    if (attempts.size >= deps.slots()) {
      await attempts.waitForSlot(signal);
      continue;
    }
    try {
      const { jobs, held } = await plane.poll(
        { wait_seconds: POLL_WAIT_SECONDS, known: attempts.known(listed) },
        signal,
      );
      streak.answered();
      for (const job of jobs) if (!signal.aborted) deps.start(job);
      listed = new Set([...jobs, ...(held ?? [])].map(attemptKey));
      // An attempt it runs that the service no longer holds has ended there (cancelled, timed out, reassigned): hear why now.
      if (held && [...attempts.values()].some((attempt) => attempt.commandRunning && !listed.has(attempt.key)))
        deps.heartbeatNow();
    } catch (error) {
      if (signal.aborted) return;
      if (!isRetryable(error)) return deps.fail(error);
      await sleep(streak.failed(error), undefined, { signal }).catch(() => undefined);
    }
  }
}
