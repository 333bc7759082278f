import { AppError } from "../../../shared/errors/index.js";
import type { Versioned } from "../../../shared/nats/index.js";
import { type AllocatedAttempt, type JobRecord, parseJobKey } from "../../../shared/records/index.js";
import type { ActiveJobs } from "../queue/active-jobs.js";
import { endAttempt } from "../jobs/attempt-metering.js";
import { release, releaseEndedAttempt } from "../placement/reservations.js";
import { type SchedulerContext } from "../scheduler-context.js";
import { changeJob } from "../jobs/change-job.js";
import { nodeLost, timeOut } from "../jobs/transitions.js";

/** A reservation younger than this may be between its two writes (reserve, then assign). */
const RESERVATION_GRACE_MS = 10_000;

/**
 * Finds what no message will ever announce, for the jobs of the partitions this replica
 * owns (`owns`): runs past their deadline, attempts on nodes that went offline or were
 * deleted, reservations whose job moved on; and (the owner of partition 0) the records of
 * deleted nodes. The replica's pictures (the active jobs, the nodes and their
 * reservations) say where to look; a job is read only to act on it, and each step is a
 * compare-and-set that checks the state again, so a stale picture costs a read and doing
 * it twice is harmless.
 */
export async function reconcileOnce(
  ctx: SchedulerContext,
  owns: (partition: number) => boolean,
  active: Pick<ActiveJobs, "jobs">,
): Promise<void> {
  const now = ctx.clock.now();
  for (const { value: allocation } of [...ctx.view.allocations.values()]) {
    const node = ctx.view.nodes.get(allocation.node_id)?.value;
    const nodeOffline = !node || node.offline_at !== null;
    for (const [jobId, reserved] of Object.entries(allocation.attempts)) {
      const partition = parseJobKey(reserved.job_key)?.partition;
      if (partition === undefined || !owns(partition)) continue;
      const seen = active.jobs.get(reserved.job_key);
      const current = seen && seen.node_id === allocation.node_id && seen.attempt === reserved.attempt;
      const pastDeadline = seen?.state === "running" && seen.deadline_ms !== null && seen.deadline_ms <= now;
      if (current && !nodeOffline && !pastDeadline) continue;
      if (!current && now - Date.parse(reserved.assigned_at) <= RESERVATION_GRACE_MS) continue;
      await settleReservation(ctx, allocation.node_id, jobId, reserved, nodeOffline, now);
    }
    if (!node && owns(0) && Object.keys(allocation.attempts).length === 0)
      await forgetDeletedNode(ctx, allocation.node_id);
  }
}

/** Reads the job of a reservation the pictures found wanting and does what the record says: release, requeue or time out. */
async function settleReservation(
  ctx: SchedulerContext,
  nodeId: string,
  jobId: string,
  reserved: AllocatedAttempt,
  nodeOffline: boolean,
  now: number,
): Promise<void> {
  const stored = await ctx.store.jobs.get(reserved.job_key);
  const job = stored?.value;
  const current =
    job &&
    job.node_id === nodeId &&
    job.attempt === reserved.attempt &&
    (job.state === "assigned" || job.state === "running");
  if (!current || !stored) {
    if (now - Date.parse(reserved.assigned_at) > RESERVATION_GRACE_MS)
      await release(ctx, nodeId, jobId, reserved.attempt);
    return;
  }
  try {
    if (nodeOffline) {
      await requeueFromLostNode(ctx, stored, reserved.job_key);
    } else if (job.state === "running" && job.deadline_at !== null && Date.parse(job.deadline_at) <= now) {
      await endAttempt(ctx, reserved.job_key, "timeout", (record) => timeOut(record, now), stored);
      ctx.logger.info({ job_id: jobId, attempt: reserved.attempt }, "job timed out");
    } else {
      return;
    }
    await releaseEndedAttempt(ctx, nodeId, jobId, reserved.attempt);
    ctx.requestPlacement();
  } catch (error) {
    // Another replica or a result got there first.
    if (!(error instanceof AppError)) throw error;
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
