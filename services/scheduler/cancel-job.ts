import type { z } from "zod";
import type { JobPayload, JobRefCommand } from "../../shared/contract/index.js";
import { jobKey, publicJob } from "../../shared/records/index.js";
import { endAttempt } from "./attempt-metering.js";
import { release } from "./reservations.js";
import type { SchedulerContext } from "./scheduler-context.js";
import { cancel } from "./transitions.js";

/** Cancel a queued, assigned or running job; its node learns it from its next heartbeat's stop list. */
export function cancelJob(ctx: SchedulerContext) {
  return async ({ caller, body }: z.infer<typeof JobRefCommand>): Promise<JobPayload> => {
    const { before, after } = await endAttempt(ctx, jobKey(caller.app_id, caller.business_id, body.job_id), "cancel", (job) => cancel(job, ctx.clock.now()));
    if (before.node_id !== null && (before.state === "assigned" || before.state === "running")) {
      await release(ctx, before.node_id, before.job_id, before.attempt);
      ctx.requestPlacement();
    }
    return { job: publicJob(after) };
  };
}
