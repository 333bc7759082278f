import { businessJobsFilter } from "../../shared/records/index.js";
import { BUCKETS, kvStreams } from "../../shared/nats/index.js";
import type { WebhooksContext } from "./webhooks-context.js";

/** A subject of the job stream no record has (keys have four levels): the filter when no business has a webhook. */
const NO_BUSINESS = `$KV.${BUCKETS.jobs}._none_`;

/**
 * The subjects of the job records of every business that has a webhook, sorted: what the
 * job-event consumer reads. A business without webhooks is not in it, so its jobs (the
 * hot path, the benchmarks) cost the webhooks service nothing.
 */
export async function eventFilterSubjects(ctx: Pick<WebhooksContext, "webhooks">): Promise<string[]> {
  const businesses = new Set((await ctx.webhooks.keys(">")).map((key) => key.split(".").slice(0, 2)));
  if (businesses.size === 0) return [NO_BUSINESS];
  const prefix = kvStreams.allKeys(BUCKETS.jobs).slice(0, -1);
  return [
    ...new Set([...businesses].map(([app = "", business = ""]) => `${prefix}${businessJobsFilter(app, business)}`)),
  ].sort();
}

export function sameSubjects(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return a !== undefined && a.length === b.length && [...a].sort().every((subject, index) => subject === b[index]);
}
