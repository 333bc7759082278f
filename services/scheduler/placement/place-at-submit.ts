import { AppError } from "../../../shared/errors/index.js";
import { jobIdOfKey, type JobRecord, type NodeRecord, placementPoolKey } from "../../../shared/records/index.js";
import type { QueuedJobs } from "../queue/queued-jobs.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { nodeForJob } from "./plan.js";
import { reserve } from "./reservations.js";

/** What placing a new job at its submit needs of the replica's queue: whether its pool has jobs waiting, and the turns. */
export type SubmitQueue = Pick<QueuedJobs, "waitsIn" | "markServed">;

/**
 * The node a new job can be placed on by its submit, or null when it must join the queue
 * (decision 0094). Only when placing it now is what this replica's next round would do:
 * the replica places (it holds partitions, and its watch has read them); no job of the
 * pool waits in its queue (none comes first by priority or turn; a round, too, plans only
 * its own replica's queue); the job waits for nothing (no `run_at`, no parents, no
 * concurrency key, whose limit a round checks); and a node of its pool takes it now, the
 * one a round would choose. Reads the view and the queue, changes neither.
 */
export function nodeAtSubmit(
  ctx: Pick<SchedulerContext, "instance" | "ownership" | "ownShare" | "jobsWatch" | "view" | "config">,
  queue: SubmitQueue,
  job: JobRecord,
  nowMs: number,
): NodeRecord | null {
  if (job.run_at !== null || job.depends_on.length > 0 || job.waiting_on.length > 0 || job.concurrency !== null)
    return null;
  if (!ctx.jobsWatch.ready) return null;
  const holders = ctx.ownership.holders();
  if (!holders.has(ctx.instance)) return null;
  const pool_key = placementPoolKey(job, ctx.config.CJS_SHARED_OPERATOR_POOLS);
  if (queue.waitsIn(pool_key)) return null;
  const isOwn = ctx.ownShare.among([...holders.keys()]);
  const chosen = nodeForJob({ ...job, pool_key }, ctx.view.nodeViewsIn(pool_key, nowMs), isOwn);
  return (chosen && ctx.view.nodes.get(chosen.node_id)?.value) ?? null;
}

/**
 * Reserves the new job's first attempt on the node `nodeAtSubmit` chose, as a round would
 * (compare-and-set on the node's allocation record, which checks the room again). False
 * when the node had no room after all (a round's placement or a node's next job took it
 * meanwhile): the job is then created queued, as before.
 */
export async function reserveAtSubmit(
  ctx: SchedulerContext,
  node: NodeRecord,
  jobKey: string,
  job: JobRecord,
  nowMs: number,
): Promise<boolean> {
  const attempt = { job_key: jobKey, attempt: 1, resources: job.resources, assigned_at: new Date(nowMs).toISOString() };
  return reserve(ctx, node, jobIdOfKey(jobKey), attempt, job.type, nowMs).catch((error: unknown) => {
    // A node record too busy to change: the job joins the queue, as a round's lost race.
    if (error instanceof AppError) return false;
    throw error;
  });
}
