import type { Versioned } from "../../../shared/nats/index.js";
import { type JobRecord, parseJobKey, placementPoolKey } from "../../../shared/records/index.js";
import type { JobRevision, JobRevisionListener } from "../partitions/job-revision.js";
import {
  concurrencyOf,
  type Fields,
  isNumber,
  isOptionalString,
  isString,
  isStringOrNull,
} from "../partitions/record-fields.js";
import { concurrencyGate, type ConcurrencyUse } from "./concurrency-keys.js";

/** The fields of an assigned or running job that the repair sweep and the job gauges read; null for any other record. */
function activeFaceOf(record: Fields | null) {
  if (!record || (record.state !== "assigned" && record.state !== "running")) return null;
  const { attempt, node_id, updated_at, app_id, business_id, pool_id, pool_key, deadline_at } = record;
  const concurrency = concurrencyOf(record.concurrency);
  if (
    !isNumber(attempt) ||
    !isStringOrNull(node_id) ||
    !isString(updated_at) ||
    !isString(app_id) ||
    !isString(business_id) ||
    !isString(pool_id) ||
    !isString(pool_key) ||
    !isOptionalString(deadline_at) ||
    concurrency === undefined
  )
    return null;
  return {
    state: record.state as "assigned" | "running",
    attempt,
    node_id,
    updated_at,
    app_id,
    business_id,
    pool_id,
    pool_key,
    deadline_at: deadline_at ?? null,
    concurrency,
  };
}

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
  /** The job's concurrency key's scope (`concurrencyGate`), null without one. */
  concurrency_scope: string | null;
  /** The whole record of that revision. */
  record: Fields;
}

/**
 * The latest record of each active job of this replica's partitions, from its watch and its
 * own writes (`JobsWatch.noteWritten`): a node's poll and result start from it instead of
 * reading the record. A copy that lags only costs a refused compare-and-set, after which
 * the record is read.
 */
export interface ActiveRecords {
  /** The record as last seen, when the job is assigned or running in a partition this replica owns. */
  latest(jobKey: string): Versioned<JobRecord> | undefined;
}

/**
 * Every job that holds (or should hold) a node's room, as this replica last saw it, from
 * the replica's watch of the job bucket. It lets the repair sweep check what the broker
 * promised without listing the bucket; a lagging picture only costs a failed
 * compare-and-set.
 */
export class ActiveJobs implements JobRevisionListener, ConcurrencyUse, ActiveRecords {
  readonly jobs = new Map<string, ActiveJob>();
  /** Active jobs per concurrency key scope: the count placement checks a key's `max_running` against. */
  readonly #inUse = new Map<string, number>();

  /**
   * `sharedPools`: the operator pools shared across applications, as `placementPoolKey` reads them.
   * `onKeyFreed`: a job with a concurrency key stopped being active, so a job of its key may start now.
   */
  constructor(
    private readonly sharedPools: readonly string[] = [],
    private readonly onKeyFreed: () => void = () => undefined,
  ) {}

  inUse(scope: string): number {
    return this.#inUse.get(scope) ?? 0;
  }

  latest(jobKey: string): Versioned<JobRecord> | undefined {
    const job = this.jobs.get(jobKey);
    return job && { value: job.record as unknown as JobRecord, revision: job.revision };
  }

  apply({ key, revision, record }: JobRevision): void {
    const known = this.jobs.get(key);
    if (known && known.revision >= revision) return;
    const face = record && activeFaceOf(record);
    if (record && face) {
      const { state, attempt, node_id, updated_at, deadline_at } = face;
      const concurrency_scope = concurrencyGate(face)?.scope ?? null;
      this.count(known?.concurrency_scope ?? null, concurrency_scope);
      this.jobs.set(key, {
        state,
        attempt,
        node_id,
        revision,
        updated_ms: Date.parse(updated_at),
        pool_key: placementPoolKey(face, this.sharedPools),
        deadline_ms: deadline_at ? Date.parse(deadline_at) : null,
        concurrency_scope,
        record,
      });
    } else if (known) {
      this.jobs.delete(key);
      this.count(known.concurrency_scope, null);
    }
  }

  dropPartition(partition: number): void {
    for (const [key, known] of [...this.jobs]) {
      if (parseJobKey(key)?.partition !== partition) continue;
      this.jobs.delete(key);
      this.count(known.concurrency_scope, null);
    }
  }

  /** Moves a job's place in the per-key counts from the scope it had to the one it has. */
  private count(before: string | null, after: string | null): void {
    if (before === after) return;
    if (after !== null) this.#inUse.set(after, this.inUse(after) + 1);
    if (before === null) return;
    const left = this.inUse(before) - 1;
    if (left > 0) this.#inUse.set(before, left);
    else this.#inUse.delete(before);
    if (after === null) this.onKeyFreed();
  }
}
