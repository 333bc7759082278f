import { isTerminal, type JobState } from "../../../shared/contract/index.js";
import { parseJobKey } from "../../../shared/records/index.js";
import type { JobRevision, JobRevisionListener } from "../partitions/job-revision.js";

/** A finished job the retention sweep may delete: its key, the revision seen, when it finished. */
export interface FinishedJob {
  key: string;
  /** `<app>.<business>`: whose plan's retention applies. */
  business: string;
  revision: number;
  finishedMs: number;
}

/** When a stored record finished, or null when it has not (or cannot be read). */
function finishedMsOf(record: Record<string, unknown> | null): number | null {
  if (!record) return null;
  // Cheap checks, no schema: every replica runs this for every revision of every job.
  if (
    typeof record.state !== "string" ||
    !isTerminal(record.state as JobState) ||
    typeof record.finished_at !== "string"
  )
    return null;
  const finishedMs = Date.parse(record.finished_at);
  return Number.isNaN(finishedMs) ? null : finishedMs;
}

function businessOf(key: string): string {
  const parts = parseJobKey(key);
  return parts ? `${parts.app_id}.${parts.business_id}` : "";
}

/**
 * The finished jobs of the bucket and when each finished, kept from the replica's job
 * watch: the retention sweep finds what is due here, without reading the bucket. About 60
 * bytes a finished job; a job retried or deleted leaves it.
 */
export class FinishedJobs implements JobRevisionListener {
  readonly #jobs = new Map<string, { revision: number; finishedMs: number }>();

  apply({ key, revision, record }: JobRevision): void {
    const known = this.#jobs.get(key);
    if (known && known.revision >= revision) return;
    const finishedMs = finishedMsOf(record);
    if (finishedMs === null) this.#jobs.delete(key);
    else this.#jobs.set(key, { revision, finishedMs });
  }

  dropPartition(partition: number): void {
    for (const key of [...this.#jobs.keys()]) if (parseJobKey(key)?.partition === partition) this.#jobs.delete(key);
  }

  /** Drops a job the sweep deleted or found changed, unless the watch has brought a later revision meanwhile. */
  forget(key: string, revision: number): void {
    const known = this.#jobs.get(key);
    if (known && known.revision <= revision) this.#jobs.delete(key);
  }

  get size(): number {
    return this.#jobs.size;
  }

  /** The businesses with finished jobs. */
  businesses(): Set<string> {
    const businesses = new Set<string>();
    for (const key of this.#jobs.keys()) businesses.add(businessOf(key));
    return businesses;
  }

  /**
   * Up to `limit` jobs finished at least their business's retention before `nowMs`, oldest
   * first, and how many are due in all. A business without a known retention is skipped.
   */
  due(
    nowMs: number,
    retentionMsOf: (business: string) => number | undefined,
    limit: number,
  ): { jobs: FinishedJob[]; total: number } {
    const due: FinishedJob[] = [];
    for (const [key, { revision, finishedMs }] of this.#jobs) {
      const business = businessOf(key);
      const retentionMs = retentionMsOf(business);
      if (retentionMs !== undefined && finishedMs + retentionMs <= nowMs)
        due.push({ key, business, revision, finishedMs });
    }
    due.sort((a, b) => a.finishedMs - b.finishedMs);
    return { jobs: due.slice(0, limit), total: due.length };
  }
}
