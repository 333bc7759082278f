import type { z } from "zod";
import type { JobSummary, ListJobsCommand, ListJobsResponse } from "../../shared/contract/index.js";
import { businessJobsFilter, jobKey, type JobRecord } from "../../shared/records/index.js";
import { jobAsSeen } from "./job-as-seen.js";
import type { SchedulerContext } from "./scheduler-context.js";

type ListFilters = z.infer<typeof ListJobsCommand>["body"];

function asArray<T>(value: T | T[] | undefined): T[] | undefined {
  return value === undefined ? undefined : Array.isArray(value) ? value : [value];
}

function matches(job: JobRecord, filters: ListFilters): boolean {
  const states = asArray(filters.state);
  if (states && !states.includes(job.state)) return false;
  if (filters.pool_id !== undefined && job.pool_id !== filters.pool_id) return false;
  if (filters.type !== undefined && job.type !== filters.type) return false;
  if (filters.node_id !== undefined && job.node_id !== filters.node_id) return false;
  // As instants, not text: `…:54Z` and `…:54.000Z` are the same moment.
  const created = Date.parse(job.created_at);
  if (filters.created_after !== undefined && created <= Date.parse(filters.created_after)) return false;
  if (filters.created_before !== undefined && created >= Date.parse(filters.created_before)) return false;
  for (const label of asArray(filters.label) ?? []) {
    const [key, value] = label.split("=") as [string, string];
    if (job.labels[key] !== value) return false;
  }
  return true;
}

/**
 * The business's jobs, newest first. Ids sort by creation time, so the cursor is the last
 * id returned and a page never shifts when newer jobs arrive.
 */
export function listJobs(ctx: SchedulerContext) {
  return async ({ caller, body }: z.infer<typeof ListJobsCommand>): Promise<ListJobsResponse> => {
    const prefix = `${caller.app_id}.${caller.business_id}.`;
    const ids: string[] = [];
    for (const key of await ctx.store.jobs.keys(businessJobsFilter(caller.app_id, caller.business_id))) {
      const id = key.slice(prefix.length);
      if (body.cursor === undefined || id < body.cursor) ids.push(id);
    }
    ids.sort().reverse();
    const items: JobSummary[] = [];
    let index = 0;
    for (; index < ids.length && items.length < body.limit; index += 1) {
      const stored = await ctx.store.jobs.get(jobKey(caller.app_id, caller.business_id, ids[index] as string));
      if (!stored || !matches(stored.value, body)) continue;
      const { env: _env, timeline: _timeline, ...summary } = jobAsSeen(ctx, stored.value);
      items.push(summary);
    }
    // More ids remain: the next page starts after the last one examined.
    return { items, next_cursor: index < ids.length ? (ids[index - 1] ?? null) : null };
  };
}
