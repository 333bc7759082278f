import { z } from "zod";
import { CreditAmount, PlanRates } from "./billing.js";
import { hasAtMostSixDecimals, Timestamp } from "./common.js";
import { BusinessId, JobId } from "./ids.js";
import { UserContext } from "./internal.js";
import { PoolId, Resources } from "./jobs.js";

/**
 * The compute-credit ledger on the wire. Amounts are credits as decimal numbers with at
 * most six places; the ledger counts whole micro-credits, so sums never drift.
 */

/** `grant`: a period's included credit; `debit`: a job attempt's charge; `set`: an operator's adjustment. */
export const LedgerEntryKind = z.enum(["grant", "debit", "set"]);
export type LedgerEntryKind = z.infer<typeof LedgerEntryKind>;

/** What a debit was computed from: the attempt's wall time, the job's resources and the plan's rates. */
export const DebitUsage = z.object({
  wall_seconds: z.number().min(0),
  cpu: z.number(),
  memory_mb: z.number(),
  gpu: z.number(),
  plan_id: z.string(),
  rates: PlanRates,
});
export type DebitUsage = z.infer<typeof DebitUsage>;

export const LedgerEntry = z.object({
  /** Unique per account, and what makes the effect happen once: `job.<job id>.<attempt>`, `grant.<period start, ms>`, `set.<id>`. */
  entry_id: z.string(),
  kind: LedgerEntryKind,
  /** Credits added (a grant, a set upwards) or removed (negative: a debit, a set downwards). */
  amount: CreditAmount,
  /** The account's balance right after this entry. */
  balance_after: CreditAmount,
  /** The job and attempt a debit charges; null for other kinds. */
  job_id: JobId.nullable(),
  attempt: z.number().int().nullable(),
  /** How a debit was computed; null for other kinds. */
  usage: DebitUsage.nullable(),
  created_at: Timestamp,
});
export type LedgerEntry = z.infer<typeof LedgerEntry>;

export const ListLedgerRequest = z.strictObject({
  limit: z.number().int().min(1).max(200).default(50),
  /** `next_cursor` of the previous page. */
  cursor: z
    .string()
    .regex(/^[0-9]{1,16}$/, "a `next_cursor` value")
    .optional(),
});
export type ListLedgerRequest = z.infer<typeof ListLedgerRequest>;

export const ListLedgerResponse = z.object({
  /** The business's balance now, in credits (negative when a long job overdrew it). */
  balance: CreditAmount,
  /** Newest first. */
  items: z.array(LedgerEntry),
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: z.string().nullable(),
});
export type ListLedgerResponse = z.infer<typeof ListLedgerResponse>;

/** An amount typed by an operator: a number, or its decimal text, with at most six decimal places. */
const DECIMAL = /^-?[0-9]+(\.[0-9]+)?$/;
const AmountInput = z.preprocess(
  (value) => (typeof value === "string" && DECIMAL.test(value.trim()) ? Number(value.trim()) : value),
  z
    .number({ error: "a decimal number such as 100 or 2.5" })
    .finite()
    .min(0, "at least 0")
    .max(1_000_000_000, "at most 1000000000")
    .refine(hasAtMostSixDecimals, "at most six decimal places"),
);

/** Operator command `credit set`: makes a business's balance exactly `amount` credits. */
export const SetCreditRequest = z.strictObject({
  business_id: BusinessId,
  amount: AmountInput,
});
export type SetCreditRequest = z.infer<typeof SetCreditRequest>;

export const SetCreditResponse = z.object({
  app_id: z.string(),
  business_id: z.string(),
  previous_balance: CreditAmount,
  balance: CreditAmount,
  entry_id: z.string(),
});
export type SetCreditResponse = z.infer<typeof SetCreditResponse>;

/** The scheduler asks billing before queueing a job on an operator pool. */
export const CreditCheckCommand = z.object({
  caller: UserContext.pick({ app_id: true, business_id: true }).extend({
    /** The API key the attempt is charged to (the job's key); its monthly budget is checked too. Absent or null: none. */
    key_id: z.string().nullable().default(null),
  }),
  body: z.object({ pool_id: PoolId, resources: Resources, timeout_seconds: z.number().int() }),
});
export type CreditCheckCommand = z.infer<typeof CreditCheckCommand>;

/** Billing's answer when the job may go ahead; a refusal is an error (`resource.limit_reached`, `plan.limit_exceeded`). */
export const CreditCheckReply = z.object({
  plan_id: z.string(),
  billed: z.boolean(),
  balance: CreditAmount,
  /** The plan's rates, and what an hour of the job's resources costs at them (a dry run shows both). */
  rates: PlanRates.optional(),
  estimated_per_hour: CreditAmount.optional(),
});
export type CreditCheckReply = z.infer<typeof CreditCheckReply>;

export const ListLedgerCommand = z.object({ caller: UserContext, body: ListLedgerRequest });
export type ListLedgerCommand = z.infer<typeof ListLedgerCommand>;

/** Why the scheduler ends a started attempt: a node's result, the reconciler's timeout, a user's cancel. */
export const MeteringReason = z.enum(["result", "timeout", "cancel"]);
export type MeteringReason = z.infer<typeof MeteringReason>;

/**
 * Published to `CJS_METERING` before the compare-and-set that ends a running attempt on an
 * operator pool. It announces a change that may still lose its race: billing reads the job
 * record to learn how (and whether) the attempt ended.
 */
export const MeteringMessage = z.object({
  job_key: z.string(),
  job_id: JobId,
  attempt: z.number().int().positive(),
  reason: MeteringReason,
});
export type MeteringMessage = z.infer<typeof MeteringMessage>;

/** The gateway asks what the business's API keys were charged this month (its key list shows it). */
export const KeySpendCommand = z.object({ caller: UserContext.pick({ app_id: true, business_id: true }) });
export type KeySpendCommand = z.infer<typeof KeySpendCommand>;

export const KeySpendReply = z.object({
  /** The calendar month (UTC) counted, `YYYY-MM`. */
  month: z.string(),
  /** When the count starts again from zero: the first instant of next month, UTC. */
  resets_at: Timestamp,
  /** Credits charged per key id this month; a key charged nothing is absent. */
  spent: z.record(z.string(), z.number()),
});
export type KeySpendReply = z.infer<typeof KeySpendReply>;
