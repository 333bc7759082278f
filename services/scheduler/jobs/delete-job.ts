import type { z } from "zod";
import { isTerminal, type DeleteJobResponse, type JobRefCommand } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { jobKey, type JobRecord } from "../../../shared/records/index.js";
import { purgeJob } from "./purge-job.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { retentionDeleted } from "../scheduler-metrics.js";

/** Only a finished job may be deleted: one still queued or running is cancelled first. */
export function checkFinished(job: JobRecord): void {
  if (!isTerminal(job.state)) {
    throw new AppError("state.conflict", `Cannot delete a job that is ${job.state}; cancel it first.`, {
      details: { state: job.state, job_id: job.job_id },
    });
  }
}

/**
 * `jobs/delete`: a finished job of the caller's business, with its log lines and
 * artifacts. Any user of the business may, as with cancel; another tenant's job is simply
 * not found under the caller's key prefix, and so is a job already deleted.
 */
export function deleteJob(ctx: SchedulerContext) {
  return async ({ caller, body }: z.infer<typeof JobRefCommand>): Promise<DeleteJobResponse> => {
    const purged = await purgeJob(ctx, jobKey(caller.app_id, caller.business_id, body.job_id), checkFinished);
    retentionDeleted.inc({ kind: "job", reason: "request" });
    retentionDeleted.inc({ kind: "artifact", reason: "request" }, purged.artifacts);
    retentionDeleted.inc({ kind: "log_message", reason: "request" }, purged.logMessages);
    return { job_id: purged.job.job_id };
  };
}
