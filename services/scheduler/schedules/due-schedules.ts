import { KvWatchInclude } from "@nats-io/kv";
import { decodeJson, type Versioned } from "../../../shared/nats/index.js";
import { forEachBounded } from "../../../shared/runtime/index.js";
import { ScheduleRecord } from "./schedule-record.js";
import type { Schedules } from "./schedule-store.js";

/** How often the whole bucket is read again, in case the watch missed a change. */
export const RESYNC_MS = 60_000;
const PARALLEL_READS = 8;

/** When a schedule is due next: its `next_run_at` while active; null when it makes no job (paused, or no tick to come). */
export function dueAt(schedule: ScheduleRecord): number | null {
  return schedule.state === "active" && schedule.next_run_at !== null ? Date.parse(schedule.next_run_at) : null;
}

/**
 * When each schedule is due, kept from a watch of the schedule bucket, so a check reads
 * only the schedules whose tick has come (afresh, before firing) rather than every
 * schedule each time. The watch is not trusted alone: the replica that fires reads the
 * whole bucket again every `RESYNC_MS`.
 */
export class DueSchedules {
  readonly #due = new Map<string, { at: number | null; revision: number }>();
  #watcher: { stop(): void } | undefined;
  #resyncedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly schedules: Schedules) {}

  async start(): Promise<void> {
    const watcher = await this.schedules.kv.watch({ include: KvWatchInclude.LastValue });
    this.#watcher = watcher;
    void (async () => {
      for await (const entry of watcher) {
        if (entry.operation !== "PUT") this.#due.delete(entry.key);
        else this.note(entry.key, { value: decodeJson(entry.value), revision: entry.revision });
      }
    })();
  }

  stop(): void {
    this.#watcher?.stop();
  }

  /** What a read or a write found under `key` (null: nothing, the schedule is gone); an older revision than the one known changes nothing. */
  note(key: string, stored: Versioned<unknown> | null): void {
    if (stored === null) {
      this.#due.delete(key);
      return;
    }
    const known = this.#due.get(key);
    if (known && known.revision > stored.revision) return;
    const parsed = ScheduleRecord.safeParse(stored.value);
    this.#due.set(key, { at: parsed.success ? dueAt(parsed.data) : null, revision: stored.revision });
  }

  /** The keys of the schedules due at `nowMs`; first reads the whole bucket again when a resync is due. */
  async dueKeys(nowMs: number): Promise<string[]> {
    if (nowMs - this.#resyncedAt >= RESYNC_MS) {
      await forEachBounded(await this.schedules.keys(), PARALLEL_READS, async (key) =>
        this.note(key, await this.schedules.get(key)),
      );
      this.#resyncedAt = nowMs;
    }
    return [...this.#due].filter(([, due]) => due.at !== null && due.at <= nowMs).map(([key]) => key);
  }
}
