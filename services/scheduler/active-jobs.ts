import { KvWatchInclude } from "@nats-io/kv";
import { z } from "zod";
import { decodeJson } from "../../shared/nats/index.js";
import type { SchedulerStore } from "./scheduler-store.js";

/** The fields of a job record the repair sweep needs; the rest passes through unread. */
const ActiveFace = z.looseObject({
  state: z.string(),
  attempt: z.number(),
  node_id: z.string().nullable(),
  updated_at: z.string(),
});

export interface ActiveJob {
  state: "queued" | "assigned" | "running";
  attempt: number;
  node_id: string | null;
  /** The KV revision seen: a repair writes by compare-and-set on it. */
  revision: number;
  updated_ms: number;
}

const ACTIVE_STATES = new Set(["queued", "assigned", "running"]);

/**
 * Every job that is not finished, as this replica last saw it: a watch of the job bucket
 * (last values, then changes). It lets the repair sweep check what the broker promised
 * without listing the bucket; a lagging picture only costs a failed compare-and-set.
 */
export class ActiveJobs {
  readonly jobs = new Map<string, ActiveJob>();
  #watcher: { stop(): void } | undefined;

  constructor(private readonly store: SchedulerStore) {}

  async start(): Promise<void> {
    const watcher = await this.store.jobs.kv.watch({ include: KvWatchInclude.LastValue });
    this.#watcher = watcher;
    void (async () => {
      for await (const entry of watcher) {
        const known = this.jobs.get(entry.key);
        if (known && known.revision >= entry.revision) continue;
        const face = entry.operation === "PUT" ? ActiveFace.safeParse(decodeJson(entry.value)) : undefined;
        if (face?.success && ACTIVE_STATES.has(face.data.state)) {
          const { state, attempt, node_id, updated_at } = face.data;
          this.jobs.set(entry.key, { state: state as ActiveJob["state"], attempt, node_id, revision: entry.revision, updated_ms: Date.parse(updated_at) });
        } else {
          this.jobs.delete(entry.key);
        }
      }
    })();
  }

  stop(): void {
    this.#watcher?.stop();
  }
}
