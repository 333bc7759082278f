import type { z } from "zod";
import type { PollCommand, PollReply } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import type { AllocatedAttempt } from "../../shared/records/index.js";
import { changeJob, type SchedulerContext } from "./scheduler-context.js";
import { start } from "./transitions.js";

type Delivered = PollReply["jobs"][number];

/**
 * The node's current attempts. Delivering an assigned attempt is what starts it (`running`);
 * polling again returns the same attempts, so a lost answer costs nothing. The wait of a
 * long poll happens in the gateway. The node's reservations are read from the record, not
 * the view, which may not have seen a placement by another replica yet; their jobs are
 * read side by side.
 */
export function poll(ctx: SchedulerContext) {
  return async ({ caller }: z.infer<typeof PollCommand>): Promise<PollReply> => {
    const allocation = await ctx.store.allocations.get(caller.node_id);
    const delivered = await Promise.all(
      Object.entries(allocation?.value.attempts ?? {}).map(([jobId, reserved]) =>
        deliver(ctx, caller.node_id, jobId, reserved),
      ),
    );
    return { jobs: delivered.filter((job) => job !== null) };
  };
}

/** The attempt as the node runs it, started now if it was only assigned; null when it is not the node's to run. */
async function deliver(
  ctx: SchedulerContext,
  nodeId: string,
  jobId: string,
  reserved: AllocatedAttempt,
): Promise<Delivered | null> {
  const stored = await ctx.store.jobs.get(reserved.job_key);
  if (!stored || stored.value.node_id !== nodeId || stored.value.attempt !== reserved.attempt) return null;
  let job = stored.value;
  if (job.state === "assigned") {
    try {
      job = (
        await changeJob(
          ctx,
          reserved.job_key,
          (record) => start(record, reserved.attempt, nodeId, ctx.clock.now()),
          stored,
        )
      ).after;
    } catch (error) {
      if (error instanceof AppError) return null;
      throw error;
    }
  }
  if (job.state !== "running") return null;
  const { app_id, business_id, name, type, command, env, resources, timeout_seconds, labels, metadata, attempt } = job;
  return {
    job_id: jobId,
    attempt,
    name,
    type,
    command,
    env,
    resources,
    timeout_seconds,
    labels,
    metadata,
    app_id,
    business_id,
  };
}
