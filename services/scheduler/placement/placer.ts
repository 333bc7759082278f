import type { NodeAssignedEvent } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { decodeJson, encodeJson, subjects, type Versioned } from "../../../shared/nats/index.js";
import { forEachBounded } from "../../../shared/runtime/index.js";
import type { QueuedJob, QueuedJobs } from "../queue/queued-jobs.js";
import {
  type AllocatedAttempt,
  JobRecord,
  jobIdOfKey,
  type NodeRecord,
  roomAt,
} from "../../../shared/records/index.js";
import { type NodeView, planPlacements } from "./plan.js";
import { assignmentLanded } from "./assignment-landed.js";
import { release, reserve } from "./reservations.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { changeJob } from "../jobs/change-job.js";
import { deliveredAttempt } from "../jobs/delivered-attempt.js";
import { assignLatencySeconds, placements } from "../scheduler-metrics.js";
import { assign, start } from "../jobs/transitions.js";

/** Writes of one round in flight at once: enough to hide round trips, few enough not to flood NATS. */
const PLACEMENT_LANES = 32;

/**
 * One placement round: plan over this replica's picture of the cluster and the whole
 * queue, then apply each placement — reserve the node's capacity, assign the job, each a
 * compare-and-set. A job that waits is not written: why it waits is worked out when it
 * is read (`pendingReason`).
 */
export async function placeOnce(ctx: SchedulerContext, queued: QueuedJobs): Promise<PlacementRound> {
  const now = ctx.clock.now();
  // Jobs whose run_at or backoff has passed join their pools (the reconcile tick asks for a round when the first is due).
  queued.releaseDue(now);
  if (queued.size === 0) return { placed: 0, again: false, wakeAt: null, lost: false };
  const nodes = ctx.view.nodeViews(now);
  const plan = planPlacements(nodes, queued, ctx.concurrency, ctx.ownShare.among([...ctx.ownership.holders().keys()]));
  let placed = 0;
  // All side by side: the allocation writer puts one node's reserves of the round in one write.
  await forEachBounded(plan.placements, PLACEMENT_LANES, async ({ job_key: jobKey, node_id: nodeId }) => {
    if (await applyPlacement(ctx, queued, jobKey, nodeId)) placed += 1;
  });
  // A placement that lost its compare-and-set (a stale picture, which the view has learned since) is planned
  // again at once while others of the round landed; a round that placed nothing plans again after a bounded backoff.
  if (placed < plan.placements.length) return { placed, again: placed > 0, wakeAt: null, lost: true };
  return { placed, again: false, wakeAt: plan.waiting ? hourlyRoomAt(ctx, nodes, now) : null, lost: false };
}

/**
 * What a round did, and when to plan again although nothing announced a change: while
 * jobs wait, when a node at its hourly cap gets room again (time passing is no event).
 */
export interface PlacementRound {
  placed: number;
  /** Some placements lost their race while others landed: plan again now, from the view as it has learned. */
  again: boolean;
  wakeAt: number | null;
  /** Some placement failed (lost its race, or the round threw): with none placed, the next round waits a bounded backoff. */
  lost: boolean;
}

/** The first moment a node at its hourly cap gets room again. */
function hourlyRoomAt(ctx: SchedulerContext, nodes: readonly NodeView[], now: number): number | null {
  const times = nodes
    .filter((node) => node.per_hour && node.per_hour.used >= node.per_hour.limit)
    .map((node) =>
      roomAt(ctx.view.allocations.get(node.node_id)?.value.assigned_last_hour ?? [], now, node.per_hour?.limit ?? 0),
    );
  return times.length === 0 ? null : Math.min(...times);
}

/**
 * The queued record as the watch brought it, where the assignment's compare-and-set
 * starts instead of a read; undefined when the queue did not keep it (then it is read).
 * One this replica wrote is used as written: it needs neither a decode nor a check.
 */
function queuedRecord(queued: QueuedJobs, jobKey: string, revision: number): Versioned<JobRecord> | undefined {
  const kept = queued.recordOf(jobKey, revision);
  if (!kept) return undefined;
  if (kept.written) return { value: kept.written, revision };
  const parsed = JobRecord.safeParse(decodeJson(kept.data));
  return parsed.success ? { value: parsed.data, revision } : undefined;
}

/** The reservation a placement of `held` on a node makes: its next attempt, with what the queued revision says (never changes). */
export function attemptFor(held: QueuedJob, nowMs: number): AllocatedAttempt {
  return {
    job_key: held.job_key,
    attempt: held.attempt + 1,
    resources: held.resources,
    assigned_at: new Date(nowMs).toISOString(),
  };
}

/**
 * Reserves with what the queued revision says (type and resources never change), then
 * assigns by compare-and-set, which checks the job is still queued at that attempt.
 */
async function applyPlacement(
  ctx: SchedulerContext,
  queued: QueuedJobs,
  jobKey: string,
  nodeId: string,
): Promise<boolean> {
  const held = queued.get(jobKey);
  const node = ctx.view.nodes.get(nodeId)?.value;
  // Taken meanwhile by a node's result (`take-next.ts`): this round lost it, as to another replica.
  if (!held || !node || !queued.startPlacing(jobKey)) return false;
  try {
    return await reserveAndAssign(ctx, queued, held, node);
  } finally {
    queued.endPlacing(jobKey);
  }
}

async function reserveAndAssign(
  ctx: SchedulerContext,
  queued: QueuedJobs,
  held: QueuedJob,
  node: NodeRecord,
): Promise<boolean> {
  const { job_key: jobKey } = held;
  const { node_id: nodeId } = node;
  const jobId = jobIdOfKey(jobKey);
  const now = ctx.clock.now();
  const reserved = await reserve(ctx, node, jobId, attemptFor(held, now), held.type, now).catch((error: unknown) => {
    // A node record too busy to change: planned again at the next tick, like a lost race.
    if (error instanceof AppError) return false;
    throw error;
  });
  if (!reserved) {
    ctx.logger.debug(
      { job_id: jobId, node_id: nodeId, revision: held.revision },
      "placement: the node had no room for the job after all; planned again",
    );
    return false;
  }
  const after = await assignReserved(ctx, queued, held, nodeId, "assign");
  if (!after) return false;
  wakeNode(ctx, nodeId, after);
  return true;
}

/**
 * A job was assigned to a node (not started): the node's waiting poll is woken to take it.
 * While starts may be held (`CJS_START_WRITE_DELAY_MS` above 0) the event carries the whole
 * attempt, so the gateway holding the poll can answer it without asking (decision 0096).
 */
export function wakeNode(ctx: Pick<SchedulerContext, "nc" | "config">, nodeId: string, job: JobRecord): void {
  const event: NodeAssignedEvent = { node_id: nodeId, job_id: job.job_id, attempt: job.attempt };
  if (ctx.config.CJS_START_WRITE_DELAY_MS > 0) event.delivered = deliveredAttempt(job);
  ctx.nc.publish(subjects.nodeAssigned(nodeId), encodeJson(event));
}

/** A placement landed (by a round, a node's result or a submit): counted, with how long the job was queued. */
export function countPlacement(ctx: Pick<SchedulerContext, "clock">, job: JobRecord): void {
  placements.inc();
  assignLatencySeconds.observe(Math.max(0, ctx.clock.now() - Date.parse(job.queued_at)) / 1000);
}

/**
 * Assigns a queued job whose attempt the node has reserved, by compare-and-set on the
 * queued record (kept by the queue, else read): `assign` leaves it `assigned` for the node's
 * poll to start; `start` also starts it, for a node that takes it in the same exchange (its
 * timeline shows both events at once). The job leaves the queue and its business's turn is
 * served. On a refusal the reservation is released and null answered.
 */
export async function assignReserved(
  ctx: SchedulerContext,
  queued: QueuedJobs,
  held: QueuedJob,
  nodeId: string,
  how: "assign" | "start",
): Promise<JobRecord | null> {
  const jobKey = held.job_key;
  const attempt = held.attempt + 1;
  // Counted against its key (changeJob told the active jobs), then out of the queue, before the watch brings the revision: no round plans it again or over-places its key.
  const served = (after: JobRecord): JobRecord => {
    queued.markServed(held);
    queued.remove(jobKey, held.revision);
    countPlacement(ctx, after);
    return after;
  };
  try {
    const { after } = await changeJob(
      ctx,
      jobKey,
      (job) => {
        // Cancelled, or placed by another replica meanwhile: nothing left to do.
        if (job.state !== "queued" || job.attempt !== held.attempt)
          throw new AppError("state.conflict", "The job moved on.");
        const now = ctx.clock.now();
        const assigned = assign(job, nodeId, now);
        return how === "start" ? start(assigned, attempt, nodeId, now) : assigned;
      },
      queuedRecord(queued, jobKey, held.revision),
    );
    return served(after);
  } catch (error) {
    if (!(error instanceof AppError)) {
      // No answer (a timeout, the stream's leader lost meanwhile): the write may have landed.
      const landed = await assignmentLanded(ctx.store.jobs, jobKey, nodeId, attempt);
      if (landed) return served(landed);
      // Not known: the reservation stays, and the reconciler frees it if the job is not on it.
      if (landed === undefined) throw error;
    }
    await release(ctx, nodeId, jobIdOfKey(jobKey), attempt, { unassigned: true });
    if (!(error instanceof AppError)) throw error;
    // A job that moved on or is gone leaves the queue (a newer queued revision comes back by the watch); one too busy to change now stays for the next round.
    const leaves = error.code === "state.conflict" || error.code === "resource.not_found";
    if (leaves) queued.remove(jobKey, held.revision);
    // Debug: the trail of a job that waits while others are placed (was it planned, and why did its assignment fail?).
    ctx.logger.debug(
      { job_id: jobIdOfKey(jobKey), node_id: nodeId, revision: held.revision, code: error.code, leaves_queue: leaves },
      "placement: the job's assignment failed",
    );
    return null;
  }
}
