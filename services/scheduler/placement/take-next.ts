import type { DeliveredAttempt } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { jobIdOfKey, type NodeRecord } from "../../../shared/records/index.js";
import { deliveredAttempt } from "../jobs/delivered-attempt.js";
import type { QueuedJob, QueuedJobs } from "../queue/queued-jobs.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { planPlacements } from "./plan.js";
import { assignReserved, attemptFor } from "./placer.js";
import { release, releaseSoon, swapReservation } from "./reservations.js";

/**
 * Frees the slot of a node's finished attempt and, in the same exchange, gives the node
 * the next job for it, started (as BullMQ's worker completes a job and fetches the next in
 * one call): the first job this replica's queue would place on that node now, in the
 * queue's order. The release and the next reservation are one write of the node's
 * allocation; the assignment and start one compare-and-set of the job. So a busy node is
 * kept busy without a placement round, an event and a poll per job. Null when this replica
 * has nothing for the node (another replica's round places into the freed slot, which
 * every replica sees), or when a write lost its race (then only the release stands).
 */
export async function releaseAndTakeNext(
  ctx: SchedulerContext,
  queued: QueuedJobs,
  nodeId: string,
  freed: { jobId: string; attempt: number },
): Promise<DeliveredAttempt | null> {
  const now = ctx.clock.now();
  queued.releaseDue(now);
  const nodeView = ctx.jobsWatch.ready ? ctx.view.nodeView(nodeId, now, freed) : undefined;
  const node = ctx.view.nodes.get(nodeId)?.value;
  const placement = nodeView && planPlacements([nodeView], queued, ctx.concurrency).placements[0];
  const held = placement && queued.get(placement.job_key);
  if (!node || !held || !queued.startPlacing(held.job_key)) {
    // The slot's next job comes from a round: its reservation carries this release.
    releaseSoon(ctx, nodeId, freed.jobId, freed.attempt);
    return null;
  }
  try {
    return await swapAndStart(ctx, queued, node, freed, held);
  } finally {
    queued.endPlacing(held.job_key);
  }
}

/** Frees the finished attempt and reserves `held` in one write, then assigns and starts it; null when either lost. */
async function swapAndStart(
  ctx: SchedulerContext,
  queued: QueuedJobs,
  node: NodeRecord,
  freed: { jobId: string; attempt: number },
  held: QueuedJob,
): Promise<DeliveredAttempt | null> {
  const now = ctx.clock.now();
  const nodeId = node.node_id;
  const jobId = jobIdOfKey(held.job_key);
  const reserved = await swapReservation(
    ctx,
    node,
    freed,
    { jobId, attempt: attemptFor(held, now), jobType: held.type },
    now,
  ).catch(async (error: unknown) => {
    // A node record too busy to change: the release is written on its own, the job waits for a round.
    if (!(error instanceof AppError)) throw error;
    await release(ctx, nodeId, freed.jobId, freed.attempt);
    return false;
  });
  if (!reserved) return null;
  const started = await assignReserved(ctx, queued, held, nodeId, "start");
  return started ? deliveredAttempt(started) : null;
}
