import { AppError } from "../../../shared/errors/index.js";
import type { Versioned } from "../../../shared/nats/index.js";
import type { JobRecord } from "../../../shared/records/index.js";
import { endAttempt } from "../jobs/attempt-metering.js";
import { release, releaseEndedAttempt } from "../placement/reservations.js";
import { type SchedulerContext } from "../scheduler-context.js";
import { changeJob } from "../jobs/change-job.js";
import { nodeLost, timeOut } from "../jobs/transitions.js";

/** A reservation younger than this may be between its two writes (reserve, then assign). */
const RESERVATION_GRACE_MS = 10_000;

/**
 * Finds what no message will ever announce: runs past their deadline, attempts on nodes
 * that went offline or were deleted, reservations whose job moved on, and the records of
 * deleted nodes. Every replica runs it; each
 * step is a compare-and-set, so doing it twice is harmless.
 */
export async function reconcileOnce(ctx: SchedulerContext): Promise<void> {
  const now = ctx.clock.now();
  for (const { value: allocation } of [...ctx.view.allocations.values()]) {
    const node = ctx.view.nodes.get(allocation.node_id)?.value;
    const nodeOffline = !node || node.offline_at !== null;
    for (const [jobId, reserved] of Object.entries(allocation.attempts)) {
      const stored = await ctx.store.jobs.get(reserved.job_key);
      const job = stored?.value;
      const current =
        job &&
        job.node_id === allocation.node_id &&
        job.attempt === reserved.attempt &&
        (job.state === "assigned" || job.state === "running");
      if (!current || !stored) {
        if (now - Date.parse(reserved.assigned_at) > RESERVATION_GRACE_MS)
          await release(ctx, allocation.node_id, jobId, reserved.attempt);
        continue;
      }
      try {
        if (nodeOffline) {
          await requeueFromLostNode(ctx, stored, reserved.job_key);
        } else if (job.state === "running" && job.deadline_at !== null && Date.parse(job.deadline_at) <= now) {
          await endAttempt(ctx, reserved.job_key, "timeout", (record) => timeOut(record, now), stored);
          ctx.logger.info({ job_id: jobId, attempt: reserved.attempt }, "job timed out");
        } else {
          continue;
        }
        await releaseEndedAttempt(ctx, allocation.node_id, jobId, reserved.attempt);
        ctx.requestPlacement();
      } catch (error) {
        // Another replica or a result got there first.
        if (!(error instanceof AppError)) throw error;
      }
    }
    if (!node && Object.keys(allocation.attempts).length === 0) await forgetDeletedNode(ctx, allocation.node_id);
  }
}

/**
 * Removes the empty allocation record of a deleted node. The view may only not know a new
 * node yet, so the node's absence is read from the store first (a deleted id never returns).
 */
async function forgetDeletedNode(ctx: SchedulerContext, nodeId: string): Promise<void> {
  if (await ctx.store.nodes.get(nodeId)) return;
  const removed = await ctx.store.allocations.removeIf(nodeId, (current) => Object.keys(current.attempts).length === 0);
  if (removed) ctx.logger.info({ node_id: nodeId }, "allocation of a deleted node removed");
}

/** Requeues the job (its queued revision announces it), or fails it once its attempts are spent. */
async function requeueFromLostNode(ctx: SchedulerContext, seen: Versioned<JobRecord>, jobKey: string): Promise<void> {
  const { attempt } = seen.value;
  const { after } = await changeJob(
    ctx,
    jobKey,
    (record) => {
      if (record.attempt !== attempt) throw new AppError("state.conflict", "The job moved on.");
      return nodeLost(record, ctx.clock.now());
    },
    seen,
  );
  ctx.logger.warn({ job_id: after.job_id, attempt, state: after.state }, "node lost: job requeued or failed");
}
