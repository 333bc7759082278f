import { AppError } from "../../../shared/errors/index.js";
import { forEachBounded } from "../../../shared/runtime/index.js";
import type { JobRecord } from "../../../shared/records/index.js";
import { businessRetentionMs } from "./business-retention.js";
import { checkFinished } from "../jobs/delete-job.js";
import type { FinishedJobs } from "./finished-jobs.js";
import { purgeJob } from "../jobs/purge-job.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { retentionDeleted, retentionDue } from "../scheduler-metrics.js";

/** Jobs deleted at once: each is three requests, and the sweep must not crowd out the job path. */
const PARALLEL_DELETES = 4;

export interface RetentionSweep {
  deletedJobs: number;
  artifacts: number;
  logMessages: number;
  /** Jobs still due after the pass (beyond its batch). */
  dueLeft: number;
}

/**
 * One retention pass, run by the replica that holds the placement lease: deletes up to
 * `CJS_RETENTION_SWEEP_BATCH` finished jobs (record, log lines, artifacts) whose business's
 * retention has passed since they finished, oldest first. Each is checked again on a fresh
 * read before anything of it goes, so a job retried meanwhile is kept.
 */
export async function sweepRetentionOnce(ctx: SchedulerContext, finished: FinishedJobs): Promise<RetentionSweep> {
  const nowMs = ctx.clock.now();
  const retention = await businessRetentionMs(ctx, finished.businesses());
  const { jobs, total } = finished.due(
    nowMs,
    (business) => retention.get(business),
    ctx.config.CJS_RETENTION_SWEEP_BATCH,
  );
  const result: RetentionSweep = { deletedJobs: 0, artifacts: 0, logMessages: 0, dueLeft: 0 };
  await forEachBounded(jobs, PARALLEL_DELETES, async (due) => {
    const stillDue = (job: JobRecord): void => {
      checkFinished(job);
      // Written so that a missing or unreadable end keeps the job.
      if (!(Date.parse(job.finished_at ?? "") + (retention.get(due.business) ?? Infinity) <= ctx.clock.now())) {
        throw new AppError("state.conflict", "The job finished again since; not due yet.");
      }
    };
    try {
      const purged = await purgeJob(ctx, due.key, stillDue);
      result.deletedJobs += 1;
      result.artifacts += purged.artifacts;
      result.logMessages += purged.logMessages;
      retentionDeleted.inc({ kind: "job", reason: "retention" });
      retentionDeleted.inc({ kind: "artifact", reason: "retention" }, purged.artifacts);
      retentionDeleted.inc({ kind: "log_message", reason: "retention" }, purged.logMessages);
    } catch (error) {
      // Gone or changed since the watch saw it: its next revision, if any, brings it back.
      if (!(error instanceof AppError && (error.code === "resource.not_found" || error.code === "state.conflict")))
        throw error;
    }
    finished.forget(due.key, due.revision);
  });
  result.dueLeft = total - result.deletedJobs;
  retentionDue.set(result.dueLeft);
  return result;
}
