import { AppError } from "../../../shared/errors/index.js";
import { requestRpc } from "../../../shared/nats/index.js";
import type { JobRecord } from "../../../shared/records/index.js";
import type { SchedulerContext } from "../scheduler-context.js";

/** What deleting one job removed. */
export interface PurgedJob {
  job: JobRecord;
  artifacts: number;
  logMessages: number;
}

/**
 * Deletes a job: its artifacts (through the gateway, their owner), its log lines (through
 * the log relay), then its record, by compare-and-set on the revision `check` passed.
 * `check` throws to refuse (a job not finished, or not yet due); it sees the record first
 * and again before the record goes.
 *
 * The record goes last, so a crash or a failure midway leaves a record whose artifacts or
 * lines are gone, which retrieve and the log stream show as none, never a listed artifact
 * or line whose record is missing; deleting again (or the next sweep) finishes the work.
 * A retry that wins the race against the delete keeps its record, without the earlier
 * attempts' artifacts and lines.
 */
export async function purgeJob(
  ctx: SchedulerContext,
  jobKey: string,
  check: (job: JobRecord) => void,
): Promise<PurgedJob> {
  const stored = await ctx.store.jobs.get(jobKey);
  if (!stored) throw new AppError("resource.not_found", "No such job.");
  check(stored.value);
  const { app_id, business_id, job_id } = stored.value;
  const ref = { app_id, business_id, job_id };
  const artifacts = await requestRpc(ctx.nc, "artifactsPurge", ref);
  const logs = await requestRpc(ctx.nc, "logsPurge", ref);
  const removed = await ctx.store.jobs.removeIf(jobKey, (job) => (check(job), true), {
    markerTtlSeconds: ctx.config.CJS_RETENTION_MARKER_TTL_SECONDS,
    known: stored,
  });
  if (!removed) throw new AppError("resource.not_found", "No such job.");
  return { job: removed.value, artifacts: artifacts.deleted, logMessages: logs.deleted };
}
