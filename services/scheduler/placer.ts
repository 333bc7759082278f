import { AppError } from "../../shared/errors/index.js";
import { encodeJson, subjects } from "../../shared/nats/index.js";
import { forEachBounded } from "../../shared/runtime/index.js";
import type { PendingJobs } from "./pending-jobs.js";
import { roomAt } from "../../shared/records/index.js";
import { type NodeView, planPlacements } from "./plan.js";
import { release, reserve } from "./reservations.js";
import type { SchedulerContext } from "./scheduler-context.js";
import { changeJob } from "./scheduler-context.js";
import { assignLatencySeconds } from "./scheduler-metrics.js";
import { assign, setPendingReason } from "./transitions.js";

/** Writes of one round in flight at once: enough to hide round trips, few enough not to flood NATS. */
const PLACEMENT_LANES = 32;

/**
 * One placement round: plan over this replica's picture of the cluster and the jobs it
 * holds, then apply each placement — reserve the node's capacity, assign the job, each a
 * compare-and-set — and only then acknowledge the record's queued revision.
 */
export async function placeOnce(ctx: SchedulerContext, pending: PendingJobs): Promise<PlacementRound> {
  const held = pending.all();
  if (held.length === 0) return { placed: 0, wakeAt: null };
  const now = ctx.clock.now();
  const nodes = ctx.view.nodeViews(now);
  const plan = planPlacements(
    nodes,
    held.map((each) => each.job),
  );
  let placed = 0;
  // Nodes are placed on side by side; one node's placements go in turn, each reserving on the last one's allocation.
  const byNode = new Map<string, Array<{ job_key: string; node_id: string }>>();
  for (const placement of plan.placements) {
    const ofNode = byNode.get(placement.node_id);
    if (ofNode) ofNode.push(placement);
    else byNode.set(placement.node_id, [placement]);
  }
  await forEachBounded(byNode.values(), PLACEMENT_LANES, async (placements) => {
    for (const { job_key: jobKey, node_id: nodeId } of placements) {
      if (await applyPlacement(ctx, pending, jobKey, nodeId)) placed += 1;
    }
  });
  const newReasons = [...plan.waiting].filter(([jobKey, reason]) => {
    const job = pending.get(jobKey);
    return job !== undefined && job.reason !== reason;
  });
  await forEachBounded(newReasons, PLACEMENT_LANES, async ([jobKey, reason]) => {
    const job = pending.get(jobKey);
    if (!job) return;
    job.reason = reason;
    const written = await changeJob(ctx, jobKey, (record) => setPendingReason(record, reason, ctx.clock.now())).catch(() => undefined);
    // The new revision announces the job again; whoever it reaches holds it from now on.
    if (written) pending.handOff(jobKey, job.msg);
  });
  // A placement that lost its compare-and-set (a stale picture) is planned again at the next tick.
  if (placed < plan.placements.length) return { placed, wakeAt: now };
  return { placed, wakeAt: plan.waiting.size > 0 ? hourlyRoomAt(ctx, nodes, now) : null };
}

/**
 * What a round did, and when to plan again although nothing announced a change: while
 * jobs wait, when a node at its hourly cap gets room again (time passing is no event).
 */
export interface PlacementRound {
  placed: number;
  wakeAt: number | null;
}

/** The first moment a node at its hourly cap gets room again. */
function hourlyRoomAt(ctx: SchedulerContext, nodes: readonly NodeView[], now: number): number | null {
  const times = nodes
    .filter((node) => node.per_hour && node.per_hour.used >= node.per_hour.limit)
    .map((node) => roomAt(ctx.view.allocations.get(node.node_id)?.value.assigned_last_hour ?? [], now, node.per_hour?.limit ?? 0));
  return times.length === 0 ? null : Math.min(...times);
}

/**
 * Reserves with what the held revision says (type and resources never change), then
 * assigns by compare-and-set, which checks the job is still queued at the held attempt.
 */
async function applyPlacement(ctx: SchedulerContext, pending: PendingJobs, jobKey: string, nodeId: string): Promise<boolean> {
  const held = pending.get(jobKey);
  const node = ctx.view.nodes.get(nodeId)?.value;
  if (!held || !node) return false;
  const attempt = held.attempt + 1;
  const jobId = jobKey.slice(jobKey.lastIndexOf(".") + 1);
  const now = ctx.clock.now();
  const reserved = await reserve(
    ctx.store,
    ctx.view,
    node,
    jobId,
    { job_key: jobKey, attempt, resources: held.job.resources, assigned_at: new Date(now).toISOString() },
    held.job.type,
    now,
  ).catch((error: unknown) => {
    // A node record too busy to change: planned again at the next tick, like a lost race.
    if (error instanceof AppError) return false;
    throw error;
  });
  if (!reserved) return false;
  try {
    const { after } = await changeJob(ctx, jobKey, (job) => {
      // Cancelled, or placed by another replica meanwhile: nothing left to do.
      if (job.state !== "queued" || job.attempt !== held.attempt) throw new AppError("state.conflict", "The job moved on.");
      return assign(job, nodeId, ctx.clock.now());
    });
    pending.drop(jobKey, held.attempt);
    assignLatencySeconds.observe(Math.max(0, ctx.clock.now() - Date.parse(after.queued_at)) / 1000);
    ctx.nc.publish(subjects.nodeAssigned(nodeId), encodeJson({ node_id: nodeId, job_id: after.job_id, attempt: after.attempt }));
    return true;
  } catch (error) {
    await release(ctx, nodeId, jobId, attempt, { unassigned: true });
    if (!(error instanceof AppError)) throw error;
    // Let go only of a job that moved on or is gone; one too busy to change now stays held for the next round.
    if (error.code === "state.conflict" || error.code === "resource.not_found") pending.drop(jobKey, held.attempt);
    return false;
  }
}
