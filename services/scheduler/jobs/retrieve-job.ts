import type { z } from "zod";
import type { JobPayload, JobRefCommand } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { jobKey } from "../../../shared/records/index.js";
import { jobAsSeen } from "./job-as-seen.js";
import type { SchedulerContext } from "../scheduler-context.js";

/** A job of the caller's business; another tenant's job is simply not found under the caller's key prefix. */
export function retrieveJob(ctx: SchedulerContext) {
  return async ({ caller, body }: z.infer<typeof JobRefCommand>): Promise<JobPayload> => {
    const stored = await ctx.store.jobs.get(jobKey(caller.app_id, caller.business_id, body.job_id));
    if (!stored) throw new AppError("resource.not_found", `No job ${body.job_id}.`);
    return { job: await jobAsSeen(ctx, stored.value) };
  };
}
