import type { z } from "zod";
import type { PollCommand, PollReply } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { changeJob, type SchedulerContext } from "./scheduler-context.js";
import { start } from "./transitions.js";

/**
 * The node's current attempts. Delivering an assigned attempt is what starts it (`running`);
 * polling again returns the same attempts, so a lost answer costs nothing. The wait of a
 * long poll happens in the gateway.
 */
export function poll(ctx: SchedulerContext) {
  return async ({ caller }: z.infer<typeof PollCommand>): Promise<PollReply> => {
    const allocation = await ctx.store.allocations.get(caller.node_id);
    const jobs: PollReply["jobs"] = [];
    for (const [jobId, reserved] of Object.entries(allocation?.value.attempts ?? {})) {
      let job = (await ctx.store.jobs.get(reserved.job_key))?.value;
      if (!job || job.node_id !== caller.node_id || job.attempt !== reserved.attempt) continue;
      if (job.state === "assigned") {
        try {
          job = (await changeJob(ctx, reserved.job_key, (record) => start(record, reserved.attempt, caller.node_id, ctx.clock.now()))).after;
        } catch (error) {
          if (error instanceof AppError) continue;
          throw error;
        }
      }
      if (job.state !== "running") continue;
      const { app_id, business_id, name, type, command, env, resources, timeout_seconds, labels, metadata, attempt } = job;
      jobs.push({ job_id: jobId, attempt, name, type, command, env, resources, timeout_seconds, labels, metadata, app_id, business_id });
    }
    return { jobs };
  };
}
