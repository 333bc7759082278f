import type { z } from "zod";
import { AppError } from "../../../shared/errors/index.js";
import type { JobSummary, ListJobsCommand, ListJobsResponse } from "../../../shared/contract/index.js";
import { jobKey } from "../../../shared/records/index.js";
import { jobAsSeen } from "../jobs/job-as-seen.js";
import { decodeListCursor, encodeListCursor } from "./job-list-cursor.js";
import { jobListFaceOf, jobListFilterOf, matchesJobListFilter } from "./job-list-filter.js";
import type { JobListIndex } from "./job-list-index.js";
import type { SchedulerContext } from "../scheduler-context.js";

/**
 * Reads of the index's candidates before a page that is still short is answered as it is.
 * A candidate falls out only when its record changed between the index and the read, so
 * a second read is rare and a fifth means the jobs under the filter change faster than
 * they can be listed.
 */
const READ_ROUNDS = 4;

/**
 * The business's jobs, newest first. Ids sort by creation time, so the cursor names the
 * last id the page examined and a page never shifts when newer jobs arrive; it is bound to
 * the listing (business and filters), so one from elsewhere is 400, not some other page.
 *
 * The index (kept from this replica's watch, caught up with every write made before the
 * request) filters, orders and pages; then the page's records are read side by side, and
 * each is shown as it is now. A record that no longer matches the filter is left out and
 * the next candidates are read in its place, for at most `READ_ROUNDS` reads; a page
 * still short then ends there, with the cursor after the last job examined.
 */
export function listJobs(ctx: SchedulerContext, index: JobListIndex) {
  return async ({ caller, body }: z.infer<typeof ListJobsCommand>): Promise<ListJobsResponse> => {
    const { app_id, business_id } = caller;
    const { limit, cursor, ...listing } = body;
    const filter = jobListFilterOf(body);
    const after = cursor === undefined ? undefined : decodeListCursor(app_id, business_id, listing, cursor);
    // A page from a picture still missing earlier writes would look complete and not be.
    if (!(await ctx.jobsWatch.caughtUp())) {
      throw new AppError(
        "service.unavailable",
        "The scheduler is still reading the job records; try again in a moment.",
        { retryAfterSeconds: 1 },
      );
    }
    const items: JobSummary[] = [];
    let examined = after;
    const next = () => (examined === undefined ? null : encodeListCursor(app_id, business_id, listing, examined));
    for (let round = 1; round <= READ_ROUNDS; round += 1) {
      const { ids, more } = index.find(app_id, business_id, filter, examined, limit - items.length);
      const records = await Promise.all(ids.map((id) => ctx.store.jobs.get(jobKey(app_id, business_id, id))));
      for (const stored of records) {
        const face = stored && jobListFaceOf(stored.value);
        if (!stored || !face || !matchesJobListFilter(filter, face)) continue;
        const { env: _env, timeline: _timeline, ...summary } = jobAsSeen(ctx, stored.value);
        items.push(summary);
      }
      examined = ids.at(-1) ?? examined;
      if (!more) return { items, next_cursor: null };
      if (items.length === limit) return { items, next_cursor: next() };
    }
    return { items, next_cursor: next() };
  };
}
