import type { Plan } from "../../../shared/contract/index.js";
import type { JobRecord } from "../../../shared/records/index.js";
import type { CreditContext } from "../credit/credit-context.js";
import type { JobDebit, RecordedEntry } from "../ledger/index.js";
import { chargeMicros, type ChargedEnd } from "./charge.js";

/** The debit of an attempt that the job record shows charged, at `plan`'s rates. */
export function jobDebit(job: JobRecord, attempt: number, end: ChargedEnd, plan: Plan): JobDebit {
  const { cpu, memory_mb, gpu } = job.resources;
  return {
    job_id: job.job_id,
    attempt,
    charge_micros: chargeMicros(end.wall_ms, job.resources, plan.rates),
    usage: { wall_seconds: end.wall_ms / 1000, cpu, memory_mb, gpu, plan_id: plan.id, rates: plan.rates },
    key_id: job.key_id,
  };
}

/**
 * Debits an attempt that the job record shows charged, at the rates of the business's plan
 * now; null, and nothing recorded, for the operator's own business, which is not billed.
 * The ledger audit charges through here, metering through `ChargeBatcher` (the same
 * debit, many at a time); the entry id (`job.<job id>.<attempt>`) makes any repeat change nothing.
 */
export async function debitAttempt(
  ctx: CreditContext,
  job: JobRecord,
  attempt: number,
  end: ChargedEnd,
): Promise<RecordedEntry | null> {
  const account = { app_id: job.app_id, business_id: job.business_id };
  if (await ctx.isOperatorAccount(account)) return null;
  const { plan, period } = await ctx.planOf(account);
  return ctx.ledger.debitJob(account, period, jobDebit(job, attempt, end, plan));
}
