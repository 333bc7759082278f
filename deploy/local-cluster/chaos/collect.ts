/** What the soak reads at the end: each job with its timeline, the ledger's debits, the agents' deliveries. */
import { readFileSync } from "node:fs";
import { ApiError } from "../../../shared/client/index.js";
import { operatorPoolKey } from "../../../shared/records/index.js";
import { forEachBounded } from "../../../shared/runtime/index.js";
import type { Debit, Delivery, FinalJob } from "./accounting.js";
import type { Session } from "./session.js";

const RETRIEVE_CONCURRENCY = 4;
const LEDGER_PAGE = 200;
/** A bound on ledger pages: far more entries than a soak makes. */
const MAX_LEDGER_PAGES = 100;

/** Each job as `jobs/retrieve` shows it; null for one the service does not know. */
export async function retrieveJobs(
  session: Session,
  jobIds: readonly string[],
  appId: string,
): Promise<Map<string, FinalJob | null>> {
  const finals = new Map<string, FinalJob | null>();
  await forEachBounded(jobIds, RETRIEVE_CONCURRENCY, async (jobId) => {
    try {
      const { job } = await session.read("retrieveJob", { job_id: jobId });
      finals.set(jobId, {
        job_id: job.job_id,
        state: job.state,
        attempt: job.attempt,
        pool_key: operatorPoolKey(appId, job.pool_id, []),
        finished_at: job.finished_at,
        timeline: job.timeline,
      });
    } catch (error) {
      if (error instanceof ApiError && error.code === "resource.not_found") finals.set(jobId, null);
      else throw error;
    }
  });
  return finals;
}

/** The debits of `jobIds` in the business's ledger, reading newest first back to `sinceMs`. */
export async function ledgerDebits(session: Session, jobIds: ReadonlySet<string>, sinceMs: number): Promise<Debit[]> {
  const debits: Debit[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LEDGER_PAGES; page++) {
    const answer = await session.read("listLedger", { limit: LEDGER_PAGE, ...(cursor ? { cursor } : {}) });
    for (const entry of answer.items) {
      if (entry.kind === "debit" && entry.job_id !== null && entry.attempt !== null && jobIds.has(entry.job_id))
        debits.push({ job_id: entry.job_id, attempt: entry.attempt });
    }
    const oldest = answer.items.at(-1);
    if (!answer.next_cursor || (oldest && Date.parse(oldest.created_at) < sinceMs)) break;
    cursor = answer.next_cursor;
  }
  return debits;
}

/** Every `job received` line of the agents' logs for `jobIds`: each is one attempt handed to a node to run. */
export function agentDeliveries(logs: readonly string[], jobIds: ReadonlySet<string>): Delivery[] {
  const deliveries: Delivery[] = [];
  for (const log of logs) {
    let text: string;
    try {
      text = readFileSync(log, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n")) {
      if (!line.includes('"job received"')) continue;
      try {
        const entry = JSON.parse(line) as { msg?: string; job_id?: string; attempt?: number };
        if (
          entry.msg === "job received" &&
          typeof entry.job_id === "string" &&
          typeof entry.attempt === "number" &&
          jobIds.has(entry.job_id)
        ) {
          deliveries.push({ job_id: entry.job_id, attempt: entry.attempt });
        }
      } catch {
        // A line cut by a kill -9 is no delivery record.
      }
    }
  }
  return deliveries;
}
