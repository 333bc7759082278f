import { z } from "zod";
import { placementPoolKey } from "../../shared/records/index.js";
import type { JobRevision, JobRevisionListener } from "./jobs-watch.js";

/** The fields of a job record the repair sweep and the job gauges need; the rest passes through unread. */
const ActiveFace = z.looseObject({
  state: z.string(),
  attempt: z.number(),
  node_id: z.string().nullable(),
  updated_at: z.string(),
  app_id: z.string(),
  pool_id: z.string(),
  pool_key: z.string(),
  deadline_at: z.string().nullable().optional(),
});

export interface ActiveJob {
  state: "assigned" | "running";
  attempt: number;
  node_id: string | null;
  /** The KV revision seen: a repair writes by compare-and-set on it. */
  revision: number;
  /** When the record last changed: for an assigned job, when it was assigned. */
  updated_ms: number;
  /** The pool placement reads the job in (`placementPoolKey`). */
  pool_key: string;
  /** When a running attempt must end; null while assigned. */
  deadline_ms: number | null;
}

const ACTIVE_STATES = new Set(["assigned", "running"]);

/**
 * Every job that holds (or should hold) a node's room, as this replica last saw it, from
 * the replica's watch of the job bucket. It lets the repair sweep check what the broker
 * promised without listing the bucket; a lagging picture only costs a failed
 * compare-and-set.
 */
export class ActiveJobs implements JobRevisionListener {
  readonly jobs = new Map<string, ActiveJob>();

  /** `sharedPools`: the operator pools shared across applications, as `placementPoolKey` reads them. */
  constructor(private readonly sharedPools: readonly string[] = []) {}

  apply({ key, revision, record }: JobRevision): void {
    const known = this.jobs.get(key);
    if (known && known.revision >= revision) return;
    const face = record ? ActiveFace.safeParse(record) : undefined;
    if (face?.success && ACTIVE_STATES.has(face.data.state)) {
      const { state, attempt, node_id, updated_at, deadline_at } = face.data;
      this.jobs.set(key, {
        state: state as ActiveJob["state"],
        attempt,
        node_id,
        revision,
        updated_ms: Date.parse(updated_at),
        pool_key: placementPoolKey(face.data, this.sharedPools),
        deadline_ms: deadline_at ? Date.parse(deadline_at) : null,
      });
    } else {
      this.jobs.delete(key);
    }
  }
}
