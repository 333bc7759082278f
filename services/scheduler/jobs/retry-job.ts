import type { z } from "zod";
import type { JobPayload, JobRefCommand } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { ServedRequest } from "../../../shared/nats/index.js";
import { jobKey } from "../../../shared/records/index.js";
import { jobAsSeen } from "./job-as-seen.js";
import { checkCredit } from "./credit-gate.js";
import { admitRetryToKeyQuota } from "./key-quotas.js";
import { type SchedulerContext } from "../scheduler-context.js";
import { changeJob } from "./change-job.js";
import { retry } from "./transitions.js";

/**
 * Requeue a failed or timed-out job under the same id: one compare-and-set of the record
 * (its queued revision is the queue announcement). On an operator pool the credit is
 * checked as for a submit. A job submitted with a key with `maxConcurrentJobs` takes a
 * place of that key again first.
 */
export function retryJob(ctx: SchedulerContext) {
  return async ({ caller, body }: z.infer<typeof JobRefCommand>, { trace }: ServedRequest): Promise<JobPayload> => {
    const key = jobKey(caller.app_id, caller.business_id, body.job_id);
    const current = await ctx.store.jobs.get(key);
    if (!current) throw new AppError("resource.not_found", `No job ${body.job_id}.`);
    // Check the state before admitting anything, so a refused retry takes no place.
    retry(current.value, ctx.clock.now());
    // The job's own key pays for the new attempt, whoever retries it.
    await checkCredit(ctx, current.value, current.value, trace);
    return ctx.queueDepth.admit(async () => {
      const admission = await admitRetryToKeyQuota(ctx, current.value, ctx.clock.now());
      try {
        const { after } = await changeJob(ctx, key, (job) => {
          if (job.attempt !== current.value.attempt)
            throw new AppError("state.conflict", "The job changed meanwhile; read it and try again.", {
              details: { state: job.state },
            });
          return { ...retry(job, ctx.clock.now()), key_slot: admission?.holdsSlot ?? false };
        });
        return { job: await jobAsSeen(ctx, after) };
      } catch (error) {
        const now = (await ctx.store.jobs.get(key).catch(() => null))?.value;
        // Unless the retry landed after all (an answer lost), its place goes back.
        if (admission && !(now?.state === "queued" && now.attempt_base === current.value.attempt))
          await admission.release();
        throw error;
      }
    });
  };
}
