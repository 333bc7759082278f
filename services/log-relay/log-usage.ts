import type { JetStreamManager } from "@nats-io/jetstream";
import { headers, type NatsConnection } from "@nats-io/transport-node";
import { z } from "zod";
import { decodeJson, STREAMS } from "../../shared/nats/index.js";
import type { Logger } from "../../shared/runtime/index.js";

/** A counter's total as the server keeps it: a decimal string (it may exceed 2^53). */
const CounterValue = z.object({ val: z.string() });

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The UTC hour of `nowMs` as `YYYYMMDDHH`, and when it ends. */
export function hourWindow(nowMs: number): { id: string; endsAtMs: number } {
  const start = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
  return { id: new Date(start).toISOString().slice(0, 13).replace(/[-T]/g, ""), endsAtMs: start + HOUR_MS };
}

/** The UTC day of `nowMs` as `YYYYMMDD`, and when it ends. */
export function dayWindow(nowMs: number): { id: string; endsAtMs: number } {
  const start = Math.floor(nowMs / DAY_MS) * DAY_MS;
  return { id: new Date(start).toISOString().slice(0, 10).replace(/-/g, ""), endsAtMs: start + DAY_MS };
}

interface Counter {
  /** The total the server last answered (every replica's bytes), 0 before the first answer. */
  total: number;
  /** Bytes this replica stored that the server has not counted yet. */
  pending: number;
  /** When the counter's window ends: past it the entry is dropped after its last flush. */
  endsAtMs: number;
}

/**
 * Bytes of log lines stored per window (a node's hour, a business's day), counted over
 * every log-relay replica in NATS counters (`Nats-Incr`, one subject per window in
 * `CJS_LOG_USAGE`). A push adds to this replica's own tally at once; every `flushMs` the
 * tallies are added to the shared counters, whose answers carry every replica's total. So
 * a push costs no round trip for its accounting, and the totals a replica judges by lag
 * the others' by at most one flush: with R replicas a window may pass its cap by about
 * R × flushMs worth of pushes. A window first seen is read once from its counter.
 */
export class LogUsage {
  private readonly counters = new Map<string, Counter>();
  private readonly reading = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly deps: {
      nc: NatsConnection;
      jsm: JetStreamManager;
      logger: Logger;
      clock: { now(): number };
      flushMs: number;
    },
  ) {}

  start(): void {
    const tick = () => {
      this.flushing = this.flush().finally(() => {
        this.flushing = undefined;
        if (this.timer !== undefined) this.timer = setTimeout(tick, this.deps.flushMs).unref();
      });
    };
    this.timer = setTimeout(tick, this.deps.flushMs).unref();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flushing;
    await this.flush();
  }

  /** Bytes counted in the window so far, every replica's as of the last flush plus this one's since. */
  async used(subject: string, endsAtMs: number): Promise<number> {
    let counter = this.counters.get(subject);
    if (!counter) {
      await this.read(subject, endsAtMs);
      counter = this.counters.get(subject);
    }
    return counter ? counter.total + counter.pending : 0;
  }

  /** Adds bytes stored now to the window's tally; the next flush counts them for everyone. */
  add(subject: string, endsAtMs: number, bytes: number): void {
    if (bytes <= 0) return;
    const counter = this.counters.get(subject) ?? { total: 0, pending: 0, endsAtMs };
    counter.pending += bytes;
    this.counters.set(subject, counter);
  }

  private read(subject: string, endsAtMs: number): Promise<void> {
    const known = this.reading.get(subject);
    if (known) return known;
    const reading = (async () => {
      let total = 0;
      try {
        const last = await this.deps.jsm.streams.getMessage(STREAMS.logUsage, { last_by_subj: subject });
        if (last) total = Number(CounterValue.parse(decodeJson(last.data)).val);
      } catch (error) {
        // Unknown for now: judged as nothing used, and learnt at the next flush.
        this.deps.logger.warn({ err: error, subject }, "could not read a log usage counter; counting from here");
      }
      const counter = this.counters.get(subject);
      if (counter) counter.total = Math.max(counter.total, total);
      else this.counters.set(subject, { total, pending: 0, endsAtMs });
    })().finally(() => this.reading.delete(subject));
    this.reading.set(subject, reading);
    return reading;
  }

  /** Adds each pending tally to its counter and keeps the total answered; drops windows that ended. */
  private async flush(): Promise<void> {
    const now = this.deps.clock.now();
    await Promise.all(
      [...this.counters.entries()].map(async ([subject, counter]) => {
        const bytes = counter.pending;
        if (bytes === 0) {
          if (counter.endsAtMs <= now) this.counters.delete(subject);
          return;
        }
        const increment = headers();
        increment.set("Nats-Incr", `+${bytes}`);
        try {
          const answer = await this.deps.nc.request(subject, new Uint8Array(), { headers: increment, timeout: 2_000 });
          counter.pending -= bytes;
          counter.total = Number(CounterValue.parse(decodeJson(answer.data)).val);
        } catch (error) {
          // Kept for the next flush (an increment whose answer was lost may then count twice: over, never under).
          this.deps.logger.warn(
            { err: error, subject },
            "could not add to a log usage counter; trying at the next flush",
          );
        }
      }),
    );
  }
}
