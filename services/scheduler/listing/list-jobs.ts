import type { Subscription } from "@nats-io/transport-node";
import type { z } from "zod";
import {
  type JobSummary,
  type ListJobsCommand,
  type ListJobsResponse,
  ListShardCommand,
} from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { queueGroups, requestRpc, serveRpc } from "../../../shared/nats/index.js";
import { JOB_PARTITIONS, jobKey } from "../../../shared/records/index.js";
import { jobAsSeen } from "../jobs/job-as-seen.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { decodeListCursor, encodeListCursor } from "./job-list-cursor.js";
import { jobListFaceOf, jobListFilterOf, matchesJobListFilter } from "./job-list-filter.js";
import type { JobListIndex } from "./job-list-index.js";

/**
 * Reads of the index's candidates before a page that is still short is answered as it is.
 * A candidate falls out only when its record changed between the index and the read, so
 * a second read is rare and a fifth means the jobs under the filter change faster than
 * they can be listed.
 */
const READ_ROUNDS = 4;
/** How long one replica's part of a list may take. */
const SHARD_TIMEOUT_MS = 3000;

function handingOver(): AppError {
  return new AppError(
    "service.unavailable",
    "The scheduler's job partitions are being handed between replicas; try again in a moment.",
    { retryAfterSeconds: 1 },
  );
}

/**
 * This replica's part: from its own index, once its watch has brought every write made
 * before the request (partitions just handed to it are read first, within the same bound).
 */
async function localShard(ctx: SchedulerContext, index: JobListIndex, command: ListShardCommand) {
  if (ctx.jobsWatch.partitions.size > 0 && !(await ctx.jobsWatch.caughtUp())) throw handingOver();
  const partitions = [...ctx.jobsWatch.partitions];
  const { app_id, business_id } = command.business;
  const found = index.find(app_id, business_id, jobListFilterOf(command.listing), command.after, command.count);
  return { ...found, partitions };
}

/** Serves this replica's part of the lists other replicas gather, on a subject of its own. */
export function serveListShard(ctx: SchedulerContext, index: JobListIndex): Subscription {
  return serveRpc(ctx.nc, "jobListShard", {
    address: ctx.instance,
    queue: queueGroups.scheduler,
    logger: ctx.logger,
    handle: (command) => localShard(ctx, index, command),
  });
}

/**
 * Up to `count` ids from every owner's partitions, newest first, and whether more follow:
 * each owner answers its own part (this replica from its index), and the parts are merged.
 * A partition no answer covered (being handed over, an owner that did not answer) is 503,
 * never a page that looks complete and is not.
 */
async function gather(
  ctx: SchedulerContext,
  index: JobListIndex,
  command: ListShardCommand,
): Promise<{ ids: string[]; more: boolean }> {
  const parts = await Promise.all(
    [...ctx.ownership.holders().keys()].map((instance) =>
      instance === ctx.instance
        ? localShard(ctx, index, command)
        : requestRpc(ctx.nc, "jobListShard", command, { address: instance, timeoutMs: SHARD_TIMEOUT_MS }).catch(
            () => null,
          ),
    ),
  );
  const covered = new Set(parts.flatMap((part) => part?.partitions ?? []));
  if (covered.size < JOB_PARTITIONS) throw handingOver();
  const ids = [...new Set(parts.flatMap((part) => part?.ids ?? []))].sort((a, b) => (a < b ? 1 : -1));
  return {
    ids: ids.slice(0, command.count),
    more: ids.length > command.count || parts.some((part) => part?.more === true),
  };
}

/**
 * The business's jobs, newest first. Ids sort by creation time, so the cursor names the
 * last id the page examined and a page never shifts when newer jobs arrive; it is bound to
 * the listing (business and filters), so one from elsewhere is 400, not some other page.
 *
 * The owners' indexes (each kept from its watch, caught up with every write made before
 * the request) filter, order and page; then the page's records are read side by side,
 * and each is shown as it is now. A record that no longer matches the filter is left out
 * and the next candidates are read in its place, for at most `READ_ROUNDS` reads; a page
 * still short then ends there, with the cursor after the last job examined.
 */
export function listJobs(ctx: SchedulerContext, index: JobListIndex) {
  return async ({ caller, body }: z.infer<typeof ListJobsCommand>): Promise<ListJobsResponse> => {
    const { app_id, business_id } = caller;
    const { limit, cursor, ...listing } = body;
    const filter = jobListFilterOf(body);
    const after = cursor === undefined ? undefined : decodeListCursor(app_id, business_id, listing, cursor);
    const items: JobSummary[] = [];
    let examined = after;
    const next = () => (examined === undefined ? null : encodeListCursor(app_id, business_id, listing, examined));
    for (let round = 1; round <= READ_ROUNDS; round += 1) {
      const { ids, more } = await gather(ctx, index, {
        business: { app_id, business_id },
        listing,
        ...(examined === undefined ? {} : { after: examined }),
        count: limit - items.length,
      });
      const records = await Promise.all(ids.map((id) => ctx.store.jobs.get(jobKey(app_id, business_id, id))));
      for (const stored of records) {
        const face = stored && jobListFaceOf(stored.value);
        if (!stored || !face || !matchesJobListFilter(filter, face)) continue;
        const { env: _env, timeline: _timeline, ...summary } = await jobAsSeen(ctx, stored.value);
        items.push(summary);
      }
      examined = ids.at(-1) ?? examined;
      if (!more) return { items, next_cursor: null };
      if (items.length === limit) return { items, next_cursor: next() };
    }
    return { items, next_cursor: next() };
  };
}
