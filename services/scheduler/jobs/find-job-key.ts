import { jobIdKeyFilter } from "../../../shared/records/index.js";
import type { SchedulerContext } from "../scheduler-context.js";

/**
 * The record key of a job a node knows only by id: from its reservation on the node (the
 * view's copy, else the record), else by a lookup over tenants. A job's key never changes,
 * so a copy of any age names it rightly; the record read next decides the rest.
 */
export async function findJobKey(ctx: SchedulerContext, nodeId: string, jobId: string): Promise<string | null> {
  const known = ctx.view.allocations.get(nodeId)?.value.attempts[jobId];
  if (known) return known.job_key;
  const reserved = (await ctx.store.allocations.get(nodeId))?.value.attempts[jobId];
  if (reserved) return reserved.job_key;
  return (await ctx.store.jobs.keys(jobIdKeyFilter(jobId)))[0] ?? null;
}
