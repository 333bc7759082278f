import type { JobState, UserContext } from "../../../shared/contract/index.js";
import { isTerminal } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { jobKey } from "../../../shared/records/index.js";
import { appendDependent, settleDependency } from "./dependency-resolution.js";
import type { SchedulerContext } from "../scheduler-context.js";

/** The most jobs that may depend on one job: its record carries their ids (`dependents`). */
export const MAX_DEPENDENTS = 1000;

/** The jobs a new job depends on, as submit found them. */
export interface Dependencies {
  /** Each parent as submit read it, with its state then. */
  parents: Array<{ id: string; key: string; state: JobState }>;
  /** The new job's `waiting_on`: its parents that have not succeeded yet. */
  waitingOn: string[];
}

const NONE: Dependencies = { parents: [], waitingOn: [] };

/**
 * Checks a submit's `depends_on`: no id twice, each a job of the caller's own business (a
 * job of another business is answered like a missing one, `resource.not_found` naming
 * the id), none with `MAX_DEPENDENTS` dependents already (`state.conflict`). A job can
 * only depend on jobs that exist before it, so no cycle can ever form.
 */
export async function checkDependencies(
  ctx: SchedulerContext,
  caller: Pick<UserContext, "app_id" | "business_id">,
  dependsOn: readonly string[] | undefined,
): Promise<Dependencies> {
  if (!dependsOn || dependsOn.length === 0) return NONE;
  const twice = dependsOn.find((id, index) => dependsOn.indexOf(id) !== index);
  if (twice !== undefined) {
    throw new AppError("request.invalid", `depends_on lists job ${twice} twice.`, {
      details: { issues: [{ path: "depends_on", message: `${twice} is listed twice` }] },
    });
  }
  const parents = await Promise.all(
    dependsOn.map(async (id) => {
      const key = jobKey(caller.app_id, caller.business_id, id);
      const stored = await ctx.store.jobs.get(key);
      if (!stored) throw new AppError("resource.not_found", `No job ${id} to depend on.`, { details: { job_id: id } });
      if (stored.value.dependents.length >= MAX_DEPENDENTS) {
        throw new AppError(
          "state.conflict",
          `Job ${id} already has ${MAX_DEPENDENTS} dependent jobs, the most one job may have.`,
          {
            details: { job_id: id, state: stored.value.state },
          },
        );
      }
      return { id, key, state: stored.value.state };
    }),
  );
  return { parents, waitingOn: parents.filter((parent) => parent.state !== "succeeded").map((parent) => parent.id) };
}

/**
 * After the new job's record is written (held by its `waiting_on`): adds its id to each
 * parent's `dependents`. A parent found ended by then (it ended between the check and
 * now, or had failed already) settles the job at once: so a parent's end is seen either
 * here or, once the job's record is in the bucket before it, by the resolver. Returns the
 * job's state then, or null when no parent had ended. A parent too busy to change now is left to the
 * periodic pass (`recheckWaitingJobs`), never failing a submit whose job exists.
 */
export async function linkDependents(
  ctx: SchedulerContext,
  childKey: string,
  childId: string,
  dependencies: Dependencies,
): Promise<JobState | null> {
  if (dependencies.parents.length === 0) return null;
  const ended: Array<{ id: string; end: JobState | null }> = [];
  await Promise.all(
    dependencies.parents.map(async ({ id, key }) => {
      const stored = await appendDependent(ctx, key, childId).catch((error: unknown) => {
        ctx.logger.warn(
          { err: error, job_id: childId, parent_id: id },
          "could not add a dependent to its parent yet; the repair pass will",
        );
        return undefined;
      });
      if (stored === undefined) return;
      const end = stored === null ? null : stored.value.state;
      if (end === null || isTerminal(end)) ended.push({ id, end });
    }),
  );
  let state: JobState | null = null;
  for (const { id, end } of ended) state = (await settleDependency(ctx, childKey, id, end)).state ?? state;
  return state;
}
