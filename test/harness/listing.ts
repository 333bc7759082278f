/** Whole listings through the public API, page by page, for tests that check every item. */
import type { ComputeClient } from "./client.js";
import type { JobSummary, LedgerEntry } from "../../shared/contract/index.js";

/** Every job of the caller's business in `pool`. */
export async function listAllJobs(client: ComputeClient, pool: string): Promise<JobSummary[]> {
  const all: JobSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.call("listJobs", {
      pool_id: pool,
      limit: 200,
      ...(cursor === undefined ? {} : { cursor }),
    });
    all.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return all;
}

/** Every ledger entry of the caller's business, newest first, and the balance read with the first page. */
export async function listAllLedgerEntries(client: ComputeClient): Promise<{ balance: number; items: LedgerEntry[] }> {
  const items: LedgerEntry[] = [];
  let balance = 0;
  let cursor: string | undefined;
  do {
    const page = await client.call("listLedger", { limit: 200, ...(cursor === undefined ? {} : { cursor }) });
    if (cursor === undefined) balance = page.balance;
    items.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return { balance, items };
}
