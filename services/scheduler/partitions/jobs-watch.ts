import { KvWatchInclude, type KvWatchEntry } from "@nats-io/kv";
import { decodeJson } from "../../../shared/nats/index.js";
import type { Logger } from "../../../shared/runtime/index.js";
import { lastStoredRevision, readStillStored } from "./missed-revisions.js";
import { jobRepairs } from "../scheduler-metrics.js";
import type { SchedulerStore } from "../scheduler-store.js";
import type { JobRevision, JobRevisionListener } from "./job-revision.js";

export type { JobRevision, JobRevisionListener };

/** How long a caller waits for the watch to catch up with the bucket before it goes on with what it has. */
const CATCH_UP_LIMIT_MS = 2000;

/** What the watch is fed from: the bucket's own watch, or (tests) one that loses entries on purpose. */
export type OpenJobsWatch = (
  kv: SchedulerStore["jobs"]["kv"],
) => Promise<AsyncIterable<KvWatchEntry> & { stop(): void }>;

const bucketWatch: OpenJobsWatch = (kv) => kv.watch({ include: KvWatchInclude.LastValue });

/**
 * The replica's one watch of the job bucket (every key's last value, then every change),
 * handed to each listener in the order of the bucket's stream. Decoding once here keeps a
 * revision's cost the same however many pictures are kept from it.
 *
 * The watch is not trusted to bring every revision that matters. Revisions are the
 * stream's sequence numbers, so a live revision above the last one seen + 1 leaves a gap;
 * most gaps are revisions replaced before they were delivered (the bucket keeps one per
 * key), but one still stored is a job's latest value the watch skipped: a job queued
 * there would never be placed by this replica. The gap is read from the bucket behind the
 * watch, without holding it up, and what it still holds handed on
 * (`cjs_job_repairs_total{kind="watch_skipped"}`). `recoverStalled` (the repair
 * sweep) covers a skipped last revision, which no later one reveals.
 */
export class JobsWatch {
  #watcher: { stop(): void } | undefined;
  #seen = 0;
  #waiters: Array<{ revision: number; resolve: () => void }> = [];
  /** The highest revision read from the bucket after a gap: up to there nothing is missing although the watch may not have brought it. */
  #readTo = 0;
  /** What the last `recoverStalled` saw: how far this replica knew the bucket, and the bucket's last revision. */
  #lastCheck: { known: number; last: number } | null = null;
  /** The gap reads in progress, one after another. */
  #gapReads: Promise<void> = Promise.resolve();
  /** Gaps whose read failed: `recoverStalled` reads them again. */
  #unread: Array<{ from: number; to: number }> = [];

  constructor(
    private readonly store: Pick<SchedulerStore, "jobs">,
    private readonly listeners: readonly JobRevisionListener[],
    private readonly logger?: Pick<Logger, "warn">,
    private readonly openWatch: OpenJobsWatch = bucketWatch,
  ) {}

  /** The highest revision handed to the listeners. */
  get seen(): number {
    return this.#seen;
  }

  async start(): Promise<void> {
    const watcher = await this.openWatch(this.store.jobs.kv);
    this.#watcher = watcher;
    void (async () => {
      for await (const entry of watcher) {
        // The first pass (each key's last value) leaves replaced revisions out by design: only a live gap is suspect.
        // Read behind the watch, one gap after another, never holding it up: a gap's revision still stored is another
        // job's, and every listener ignores a revision older than the one it holds for that job, so the order between
        // jobs does not matter, and most gaps (a revision replaced before delivery) find nothing.
        if (entry.isUpdate && entry.revision > this.#seen + 1) {
          const [from, to] = [this.#seen + 1, entry.revision - 1];
          this.#gapReads = this.#gapReads.then(() => this.fillGap(from, to));
        }
        this.deliver(entry);
      }
    })();
  }

  /** Resolves once the gaps seen so far have been read back (and what they held handed on). */
  gapsRead(): Promise<void> {
    return this.#gapReads;
  }

  /**
   * The repair sweep's check for a skipped last revision: when the watch has not moved
   * since the previous check although the bucket then held later revisions, those are
   * read from the bucket and handed on. A watch that is only slow moves between checks.
   * Gaps whose read failed are read again first.
   */
  async recoverStalled(): Promise<void> {
    for (const gap of this.#unread.splice(0)) await this.fillGap(gap.from, gap.to);
    const last = (await this.store.jobs.kv.status()).streamInfo.state.last_seq;
    const known = Math.max(this.#seen, this.#readTo);
    const previous = this.#lastCheck;
    this.#lastCheck = { known, last };
    if (previous && previous.last > previous.known && known === previous.known)
      await this.fillGap(previous.known + 1, previous.last);
  }

  /**
   * Resolves once every write the bucket held when this was called has reached the
   * listeners (read-your-writes for a request that follows a write on another replica):
   * true then; false after a bound of `CATCH_UP_LIMIT_MS` (a replica still replaying a
   * large bucket, or a last message that will never come because it expired).
   */
  async caughtUp(limitMs = CATCH_UP_LIMIT_MS): Promise<boolean> {
    const status = await this.store.jobs.kv.status();
    if (status.streamInfo.state.last_seq <= this.#seen) return true;
    // Behind the stream's last sequence: wait for the last revision still stored, since the
    // last one may be gone (an expired marker of a deleted job) and never be delivered.
    const last = await lastStoredRevision(this.store.jobs.kv);
    if (last <= this.#seen) return true;
    return new Promise<boolean>((resolve) => {
      const waiter = { revision: last, resolve: () => finish(true) };
      const timer = setTimeout(() => finish(false), limitMs);
      const finish = (reached: boolean): void => {
        clearTimeout(timer);
        this.#waiters = this.#waiters.filter((each) => each !== waiter);
        resolve(reached);
      };
      this.#waiters.push(waiter);
    });
  }

  stop(): void {
    this.#watcher?.stop();
    for (const waiter of this.#waiters.splice(0)) waiter.resolve();
  }

  /** Hands on the revisions `from`..`to` the watch skipped that are still their job's latest; a failed read is logged, never the end of the watch. */
  private async fillGap(from: number, to: number): Promise<void> {
    try {
      for (const missed of await readStillStored(this.store.jobs.kv, from, to)) {
        jobRepairs.inc({ kind: "watch_skipped" });
        this.logger?.warn(
          { job_key: missed.key, revision: missed.revision },
          "repair: the job watch skipped a job's latest revision; read it from the bucket",
        );
        this.deliver(missed);
      }
      this.#readTo = Math.max(this.#readTo, to);
    } catch (error) {
      this.#unread.push({ from, to });
      this.logger?.warn(
        { err: error, from, to },
        "the job watch skipped revisions that could not be read; the repair sweep tries again",
      );
    }
  }

  private deliver(entry: Pick<KvWatchEntry, "key" | "revision" | "operation" | "value">): void {
    const record = entry.operation === "PUT" ? decodedRecord(entry.value) : null;
    const revision: JobRevision = { key: entry.key, revision: entry.revision, record, data: entry.value };
    for (const listener of this.listeners) listener.apply(revision);
    if (entry.revision > this.#seen) this.#seen = entry.revision;
    if (this.#waiters.length > 0) {
      const due = this.#waiters.filter((waiter) => waiter.revision <= this.#seen);
      this.#waiters = this.#waiters.filter((waiter) => waiter.revision > this.#seen);
      for (const waiter of due) waiter.resolve();
    }
  }
}

/** A record that does not decode to an object is handed on as absent (each listener skips it), never as a crash of the watch. */
function decodedRecord(data: Uint8Array): Record<string, unknown> | null {
  try {
    const value = decodeJson(data);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
