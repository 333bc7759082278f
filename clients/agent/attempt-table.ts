import { Alarm } from "./alarm.js";
import { attemptKey, parseAttemptKey } from "./state-file.js";
import type { TrackedAttempt } from "./tracked-attempt.js";

/** How many finished attempts are remembered, so a poll answered before a result landed does not start one again. */
const FINISHED_KEPT = 1_024;
/** A wait for a free slot looks again at least this often. */
const SLOT_WAIT_MS = 60_000;

/** The attempts the agent holds, and those it finished of late. */
export class AttemptTable {
  readonly #running = new Map<string, TrackedAttempt>();
  readonly #finished = new Set<string>();
  /** Rung when an attempt is finished with: a slot is free. */
  readonly #freed = new Alarm();

  get size(): number {
    return this.#running.size;
  }

  get(entry: { job_id: string; attempt: number }): TrackedAttempt | undefined {
    return this.#running.get(attemptKey(entry));
  }

  values(): IterableIterator<TrackedAttempt> {
    return this.#running.values();
  }

  /** Holds the attempt until it is finished with, then remembers it as finished and frees its slot. */
  track(attempt: TrackedAttempt): void {
    this.#running.set(attempt.key, attempt);
    void attempt.done.finally(() => {
      this.#running.delete(attempt.key);
      this.#finished.add(attempt.key);
      if (this.#finished.size > FINISHED_KEPT) this.#finished.delete(this.#finished.values().next().value as string);
      this.#freed.ring();
    });
  }

  /** Whether the agent holds this attempt or finished it of late. */
  seen(key: string): boolean {
    return this.#running.has(key) || this.#finished.has(key);
  }

  /**
   * What a poll names as known: every attempt held, and each finished one the service still
   * listed in its last answer (else that one would be news each time).
   */
  known(listed: ReadonlySet<string>): Array<{ job_id: string; attempt: number }> {
    const finished = [...this.#finished].filter((key) => listed.has(key)).map(parseAttemptKey);
    return [...this.#running.values(), ...finished].map(({ job_id, attempt }) => ({ job_id, attempt }));
  }

  /** The attempts a heartbeat lists as running on this node. */
  listed(): Array<{ job_id: string; attempt: number }> {
    return [...this.#running.values()]
      .filter((attempt) => attempt.listed)
      .map(({ job_id, attempt }) => ({ job_id, attempt }));
  }

  /** Resolves when a slot may have freed (or `signal` aborts). */
  waitForSlot(signal: AbortSignal): Promise<void> {
    return this.#freed.wait(SLOT_WAIT_MS, signal);
  }

  /** Resolves once no attempt is held. */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running.values()].map((attempt) => attempt.done));
  }
}
