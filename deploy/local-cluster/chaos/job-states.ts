/** The states of the soak's jobs, from `jobs/list` (newest first, paged): cheap enough to poll while the stream runs. */
import { isTerminal, type JobState } from "../../../shared/contract/index.js";
import type { Session } from "./session.js";

const PAGE = 200;
/** A bound on pages per poll: ten thousand jobs, far beyond a soak's. */
const MAX_PAGES = 50;

export interface ListedJob {
  state: JobState;
  metadata: Record<string, string>;
}

/** Every job of the business created since `since`, by id. */
export async function listJobsSince(session: Session, since: string): Promise<Map<string, ListedJob>> {
  const jobs = new Map<string, ListedJob>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await session.read("listJobs", { created_after: since, limit: PAGE, ...(cursor ? { cursor } : {}) });
    for (const job of answer.items) jobs.set(job.job_id, { state: job.state, metadata: job.metadata });
    if (!answer.next_cursor) break;
    cursor = answer.next_cursor;
  }
  return jobs;
}

export function terminalCount(jobIds: readonly string[], listed: ReadonlyMap<string, ListedJob>): number {
  return jobIds.filter((jobId) => {
    const job = listed.get(jobId);
    return job !== undefined && isTerminal(job.state);
  }).length;
}
