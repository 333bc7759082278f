import { AppError } from "../../../shared/errors/index.js";
import { jobIdOfKey } from "../../../shared/records/index.js";
import type { ActiveJob, ActiveJobs } from "../queue/active-jobs.js";
import { reinstate } from "../placement/reservations.js";
import { type SchedulerContext } from "../scheduler-context.js";
import { changeJob } from "../jobs/change-job.js";
import { jobRepairs } from "../scheduler-metrics.js";
import { requeueUnreserved } from "../jobs/transitions.js";

/**
 * The safety net under the broker's promises: finds jobs that no message will ever move
 * again, and repairs each by compare-and-set on the revision it read.
 * - assigned, with no reservation for its attempt on its node: requeued;
 * - running, with no reservation: the reservation is written back, so the node's capacity,
 *   the job's deadline and the lost-node check see it again.
 * - a revision the replica's job watch skipped and no later one revealed (a queued job the
 *   lease holder would never place): read from the bucket (`JobsWatch.recoverStalled`);
 * - a cluster view whose watch went silent (`ClusterView.recoverSilent`): made again.
 */
export async function repairOnce(ctx: SchedulerContext, active: ActiveJobs): Promise<void> {
  const now = ctx.clock.now();
  // A job changed more recently than the grace may still be between two writes.
  for (const [jobKey, job] of active.jobs) {
    if (now - job.updated_ms < ctx.config.CJS_REPAIR_GRACE_MS || reservedInView(ctx, jobKey, job)) continue;
    try {
      await repairUnreserved(ctx, jobKey, job);
    } catch (error) {
      // The job moved on meanwhile: nothing to repair.
      if (!(error instanceof AppError)) throw error;
    }
  }
  await ctx.jobsWatch.recoverStalled();
  await ctx.view.recoverSilent();
}

function reservedInView(ctx: SchedulerContext, jobKey: string, job: ActiveJob): boolean {
  if (job.node_id === null) return false;
  return ctx.view.allocations.get(job.node_id)?.value.attempts[jobIdOfKey(jobKey)]?.attempt === job.attempt;
}

async function repairUnreserved(ctx: SchedulerContext, jobKey: string, job: ActiveJob): Promise<void> {
  // The view may lag: decide on fresh reads of both records.
  const current = await ctx.store.jobs.get(jobKey);
  if (!current || current.revision !== job.revision || current.value.node_id === null) return;
  const record = current.value;
  const nodeId = record.node_id;
  if (nodeId === null) return;
  const allocation = await ctx.store.allocations.get(nodeId);
  if (allocation?.value.attempts[record.job_id]?.attempt === record.attempt) return;
  if (record.state === "assigned") {
    await changeJob(ctx, jobKey, (latest) => {
      if (latest.attempt !== record.attempt) throw new AppError("state.conflict", "The job moved on.");
      return requeueUnreserved(latest, ctx.clock.now());
    });
    jobRepairs.inc({ kind: "assigned_unreserved" });
    ctx.logger.warn(
      { job_id: record.job_id, attempt: record.attempt, node_id: nodeId },
      "repair: an assigned job without a reservation was requeued",
    );
    ctx.requestPlacement();
  } else if (record.state === "running") {
    const assignedAt = record.started_at ?? record.updated_at;
    await reinstate(ctx, nodeId, record.job_id, {
      job_key: jobKey,
      attempt: record.attempt,
      resources: record.resources,
      assigned_at: assignedAt,
    });
    jobRepairs.inc({ kind: "running_unreserved" });
    ctx.logger.warn(
      { job_id: record.job_id, attempt: record.attempt, node_id: nodeId },
      "repair: a running job's missing reservation was written back",
    );
  }
}
