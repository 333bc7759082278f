import { AppError } from "../../shared/errors/index.js";
import { encodeJson, subjects } from "../../shared/nats/index.js";
import type { PendingJobs } from "./pending-jobs.js";
import { planPlacements } from "./plan.js";
import { release, reserve } from "./reservations.js";
import type { SchedulerContext } from "./scheduler-context.js";
import { changeJob } from "./scheduler-context.js";
import { assignLatencySeconds } from "./scheduler-metrics.js";
import { assign, setPendingReason } from "./transitions.js";

/**
 * One placement round: plan over this replica's picture of the cluster and the jobs it
 * holds, then apply each placement — reserve the node's capacity, assign the job, each a
 * compare-and-set — and only then acknowledge the queue message.
 */
export async function placeOnce(ctx: SchedulerContext, pending: PendingJobs): Promise<number> {
  const held = pending.all();
  if (held.length === 0) return 0;
  const plan = planPlacements(
    ctx.view.nodeViews(),
    held.map((each) => each.job),
  );
  let placed = 0;
  for (const { job_key: jobKey, node_id: nodeId } of plan.placements) {
    if (await applyPlacement(ctx, pending, jobKey, nodeId)) placed += 1;
  }
  for (const [jobKey, reason] of plan.waiting) {
    const job = pending.get(jobKey);
    if (!job || job.reason === reason) continue;
    job.reason = reason;
    await changeJob(ctx, jobKey, (record) => setPendingReason(record, reason, ctx.clock.now())).catch(() => undefined);
  }
  return placed;
}

async function applyPlacement(ctx: SchedulerContext, pending: PendingJobs, jobKey: string, nodeId: string): Promise<boolean> {
  const held = pending.get(jobKey);
  const node = ctx.view.nodes.get(nodeId)?.value;
  if (!held || !node) return false;
  const record = (await ctx.store.jobs.get(jobKey))?.value;
  if (!record || record.state !== "queued" || record.attempt !== held.attempt) {
    // Cancelled, or placed by another replica's copy of the message: nothing left to do.
    pending.done(jobKey);
    return false;
  }
  const attempt = record.attempt + 1;
  const reserved = await reserve(ctx.store, node, record.job_id, {
    job_key: jobKey,
    attempt,
    resources: record.resources,
    assigned_at: new Date(ctx.clock.now()).toISOString(),
  });
  if (!reserved) return false;
  try {
    const { after } = await changeJob(ctx, jobKey, (job) => {
      if (job.attempt !== held.attempt) throw new AppError("state.conflict", "The job moved on.");
      return assign(job, nodeId, ctx.clock.now());
    });
    pending.done(jobKey);
    assignLatencySeconds.observe(Math.max(0, ctx.clock.now() - Date.parse(after.queued_at)) / 1000);
    ctx.nc.publish(subjects.nodeAssigned(nodeId), encodeJson({ node_id: nodeId, job_id: after.job_id, attempt: after.attempt }));
    return true;
  } catch (error) {
    await release(ctx.store, nodeId, record.job_id, attempt);
    if (error instanceof AppError) {
      pending.done(jobKey);
      return false;
    }
    throw error;
  }
}
