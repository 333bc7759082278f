import { isTerminal, type JobState } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { Versioned } from "../../../shared/nats/index.js";
import { type JobRecord, jobIdOfKey, siblingJobKey } from "../../../shared/records/index.js";
import { forEachBounded } from "../../../shared/runtime/index.js";
import { type SchedulerContext } from "../scheduler-context.js";
import { changeJob } from "../jobs/change-job.js";
import { jobRepairs } from "../scheduler-metrics.js";
import { failDependency, releaseDependency } from "../jobs/transitions.js";
import type { ParentEnd, WaitingJobs } from "./waiting-jobs.js";

/** Waiting jobs settled at once when a parent ends: enough to hide round trips, few enough not to flood NATS. */
const SETTLE_LANES = 16;

/** Adds a job to a parent's `dependents` (once); the parent as stored after, or null when it is gone. */
export function appendDependent(
  ctx: SchedulerContext,
  parentKey: string,
  childId: string,
): Promise<Versioned<JobRecord> | null> {
  return ctx.store.jobs.mutate(parentKey, (parent) =>
    parent.dependents.includes(childId) ? undefined : { ...parent, dependents: [...parent.dependents, childId] },
  );
}

/**
 * Settles one waiting job after one of its parents ended, by compare-and-set: a parent
 * that succeeded is no longer waited for (the last one releases the job to placement);
 * one that failed, timed out, was cancelled or is gone cancels the job with
 * `job.dependency_failed` (whose own dependents then follow the same way). Returns the
 * job's state as last seen (null when it is gone) and whether this call changed it:
 * doing it twice, on two replicas or after a crash, is harmless.
 */
export async function settleDependency(
  ctx: SchedulerContext,
  childKey: string,
  parentId: string,
  end: ParentEnd,
): Promise<{ state: JobState | null; changed: boolean }> {
  let seen: JobState | null = null;
  try {
    const { after } = await changeJob(ctx, childKey, (job) => {
      seen = job.state;
      return end === "succeeded"
        ? releaseDependency(job, parentId, ctx.clock.now())
        : failDependency(job, parentId, end, ctx.clock.now());
    });
    if (after.state === "cancelled")
      ctx.logger.info(
        { job_id: after.job_id, parent_id: parentId, parent_state: end },
        "job cancelled: a job it depends on did not succeed",
      );
    return { state: after.state, changed: true };
  } catch (error) {
    // Settled already (by another replica, or by the watch while the submit told the parent), or gone.
    if (error instanceof AppError) return { state: seen, changed: false };
    throw error;
  }
}

/**
 * Settles every job waiting for a parent that ended (its owner's watch saw the end): those
 * this replica's index knows, and those the parent's record names in `dependents`, which
 * may be in other partitions (a job's dependents are written into its record at submit).
 */
export async function settleChildrenOf(
  ctx: SchedulerContext,
  waiting: WaitingJobs,
  parentKey: string,
  end: ParentEnd,
  dependents: readonly string[] = [],
): Promise<void> {
  const children = new Set([
    ...waiting.childrenOf(parentKey),
    ...dependents.map((childId) => siblingJobKey(parentKey, childId)),
  ]);
  await forEachBounded([...children], SETTLE_LANES, async (childKey) => {
    await settleDependency(ctx, childKey, jobIdOfKey(parentKey), end);
  });
}

/**
 * The periodic pass under the watch-driven resolution: reads every parent a waiting job
 * still waits for (each once) and settles the jobs whose parent ended, and adds a job
 * missing from its parent's `dependents`. So a replica that stopped between a parent's end
 * and its children's update, or a submit that stopped before telling the parents, is
 * repaired. It costs one read per distinct parent of the waiting jobs, and nothing when
 * none waits.
 */
export async function recheckWaitingJobs(ctx: SchedulerContext, waiting: WaitingJobs): Promise<void> {
  const childrenOf = new Map<string, string[]>();
  for (const { childKey, parentKeys } of waiting.entries()) {
    for (const parentKey of parentKeys) childrenOf.set(parentKey, [...(childrenOf.get(parentKey) ?? []), childKey]);
  }
  await forEachBounded([...childrenOf], SETTLE_LANES, async ([parentKey, children]) => {
    const parent = await ctx.store.jobs.get(parentKey);
    const end: ParentEnd | undefined = !parent ? null : isTerminal(parent.value.state) ? parent.value.state : undefined;
    for (const childKey of children) {
      if (end !== undefined) {
        if ((await settleDependency(ctx, childKey, jobIdOfKey(parentKey), end)).changed) {
          jobRepairs.inc({ kind: "dependency_unsettled" });
          ctx.logger.warn(
            { job_key: childKey, parent_key: parentKey, parent_state: end },
            "repair: a job still waited for a job that had ended; settled",
          );
        }
      } else if (parent && !parent.value.dependents.includes(jobIdOfKey(childKey))) {
        await appendDependent(ctx, parentKey, jobIdOfKey(childKey));
      }
    }
  });
}
