import type { JobLogSummary, JobLogSummaryCommand } from "../../shared/contract/index.js";
import { totalDropped } from "./dropped-lines.js";
import type { LogStore } from "./log-store.js";

/** A job's log totals, for the `end` event of its log stream (the gateway checked the caller's tenancy). */
export function jobLogSummary(store: LogStore) {
  return async ({ job_id }: JobLogSummaryCommand): Promise<JobLogSummary> => ({
    dropped_lines: await totalDropped(store, job_id),
  });
}
