import { KvWatchInclude, type KvWatchEntry } from "@nats-io/kv";
import { decodeJson } from "../../shared/nats/index.js";
import type { SchedulerStore } from "./scheduler-store.js";

/** One revision of a job record as the watch delivers it, decoded once for every listener. */
export interface JobRevision {
  /** The record's key, `<app>.<business>.<job id>`. */
  key: string;
  /** The KV revision: it grows with every write to the bucket, so a listener can ignore an older copy. */
  revision: number;
  /** The decoded record (unchecked JSON), or null when the key was deleted or purged. */
  record: Record<string, unknown> | null;
  /** The record's bytes, for cheap checks before a parse (`mayBeQueued`). */
  data: Uint8Array;
}

/** Something a replica keeps up to date from the job records: the active jobs, the queue, the list index. */
export interface JobRevisionListener {
  apply(revision: JobRevision): void;
}

/** How long a caller waits for the watch to catch up with the bucket before it goes on with what it has. */
const CATCH_UP_LIMIT_MS = 2000;

/**
 * The replica's one watch of the job bucket (every key's last value, then every change),
 * handed to each listener in the order of the bucket's stream. Decoding once here keeps a
 * revision's cost the same however many pictures are kept from it.
 */
export class JobsWatch {
  #watcher: { stop(): void } | undefined;
  #seen = 0;
  #waiters: Array<{ revision: number; resolve: () => void }> = [];

  constructor(
    private readonly store: Pick<SchedulerStore, "jobs">,
    private readonly listeners: readonly JobRevisionListener[],
  ) {}

  /** The highest revision handed to the listeners. */
  get seen(): number {
    return this.#seen;
  }

  async start(): Promise<void> {
    const watcher = await this.store.jobs.kv.watch({ include: KvWatchInclude.LastValue });
    this.#watcher = watcher;
    void (async () => {
      for await (const entry of watcher) this.deliver(entry);
    })();
  }

  /**
   * Resolves once every write the bucket held when this was called has reached the
   * listeners (read-your-writes for a request that follows a write on another replica):
   * true then; false after a bound of `CATCH_UP_LIMIT_MS` (a replica still replaying a
   * large bucket, or a last message that will never come because it expired).
   */
  async caughtUp(limitMs = CATCH_UP_LIMIT_MS): Promise<boolean> {
    const status = await this.store.jobs.kv.status();
    const last = status.streamInfo.state.last_seq;
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

  private deliver(entry: KvWatchEntry): void {
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
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
