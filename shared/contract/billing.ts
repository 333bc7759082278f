import { z } from "zod";
import { Timestamp } from "./common.js";
import { UserContext } from "./internal.js";

/**
 * Credit is counted in credits; amounts on the wire are decimal numbers with at most six
 * places (the ledger stores whole micro-credits, so sums never drift).
 */
export const CreditAmount = z.number().finite();

/** What one hour of each resource costs on an operator pool, in credits. */
export const PlanRates = z.strictObject({
  cpu_core_hour: CreditAmount.nonnegative(),
  memory_gb_hour: CreditAmount.nonnegative(),
  gpu_hour: CreditAmount.nonnegative(),
});
export type PlanRates = z.infer<typeof PlanRates>;

/** Limits of a plan: the job limits apply to jobs on operator pools (a business's own pools are never limited by them), the byte budgets to every job of the business. */
export const PlanLimits = z.strictObject({
  /** Longest `timeout_seconds` a job on an operator pool may ask for. */
  max_job_timeout_seconds: z.number().int().positive(),
  /** Most CPU cores one job on an operator pool may ask for. */
  max_job_cpu: z.number().positive(),
  /**
   * Bytes of log lines the business's jobs may store in a UTC day, on any pool; past it a
   * node's log push for its jobs is refused with 429 `logs.quota_exceeded` until the next day.
   */
  max_log_bytes_per_day: z.number().int().positive().default(1_073_741_824),
  /**
   * Bytes of artifacts the business may keep stored at once, on any pool (every job's, until
   * deleted or removed with their job); an upload that would pass it is refused with 413
   * `artifacts.quota_exceeded` and stores nothing.
   */
  max_artifact_bytes: z.number().int().positive().default(5_368_709_120),
});
export type PlanLimits = z.infer<typeof PlanLimits>;

/** A subscription plan, as configured (`services/billing/plans.json`, or `CJS_BILLING_PLANS_FILE`). */
export const Plan = z.strictObject({
  id: z.string().regex(/^[a-z][a-z0-9_-]{0,62}$/),
  name: z.string().min(1),
  /** Price per interval in the currency's major unit (49 means 49.00). */
  price: z.number().nonnegative(),
  /** ISO 4217, lower case (`usd`). */
  currency: z.string().regex(/^[a-z]{3}$/),
  interval: z.enum(["month", "year"]),
  /** Credit granted once per period, at the account's first use in it; unused credit carries over. */
  included_credit: CreditAmount.nonnegative(),
  rates: PlanRates,
  limits: PlanLimits,
  /** Whether jobs on operator pools are refused (402) once credit is spent. */
  billed: z.boolean(),
  /** Days a finished job (its record, log lines and artifacts) is kept, counted from when it finished; then it is deleted. */
  retention_days: z.number().int().min(1).max(3650).default(30),
  /** The Stripe Price (`price_…`, recurring, same interval) sold by a Stripe checkout of this plan; required for every paid plan once Stripe is on. Never shown to callers. */
  stripe_price_id: z
    .string()
    .regex(/^price_[A-Za-z0-9_]+$/)
    .optional(),
});
export type Plan = z.infer<typeof Plan>;

/** A plan as callers see it: the configured plan without the payment provider's ids. */
export const PublicPlan = Plan.omit({ stripe_price_id: true });
export type PublicPlan = z.infer<typeof PublicPlan>;

export function publicPlan(plan: Plan): PublicPlan {
  const { stripe_price_id: _priceId, ...shown } = plan;
  return shown;
}

export const ListPlansResponse = z.object({
  /** Every configured plan, in the order of the plans file. */
  plans: z.array(PublicPlan),
  /** The plan of a business that never subscribed. */
  default_plan_id: z.string(),
});
export type ListPlansResponse = z.infer<typeof ListPlansResponse>;

/** `active`: paid up (or the default plan); `past_due`: the provider could not collect the last payment; `canceled`: ended. */
export const SubscriptionStatus = z.enum(["active", "past_due", "canceled"]);
export type SubscriptionStatus = z.infer<typeof SubscriptionStatus>;

export const SubscriptionResponse = z.object({
  business_id: z.string(),
  /** The plan the business is on now. */
  plan: PublicPlan,
  status: SubscriptionStatus,
  /** The billing period now running: credit is granted at its start and usage counted within it. */
  current_period_start: Timestamp,
  current_period_end: Timestamp,
  /** Credits left in this period (may be negative after a long job). */
  credit_balance: z.number(),
  /** Credits used by jobs in this period. */
  usage_this_period: z.number(),
  /** The payment provider the plan was bought through (`stripe`, `sandbox`), or null for the default plan. */
  provider: z.string().nullable(),
  /** True once the business cancelled: the subscription is not renewed and ends at `current_period_end`. */
  cancel_at_period_end: z.boolean(),
  /** When the subscription ends and the business falls back to the default plan; null while it renews. */
  ends_at: Timestamp.nullable(),
  /**
   * True for the operator's own business, which is not billed: its jobs on operator pools
   * are never refused for credit or by the plan's limits, and never charged. `plan` is then
   * the plan it would be on, and the balance and usage stay as they are.
   */
  operator: z.boolean(),
});
export type SubscriptionResponse = z.infer<typeof SubscriptionResponse>;

/** An absolute `http` or `https` URL the browser is sent back to. */
const ReturnUrl = z.url({ protocol: /^https?$/, error: "an absolute http(s) URL" }).max(2048);

export const CreateCheckoutRequest = z.strictObject({
  /** The plan to buy: a paid plan from `plans/list`. */
  plan_id: z.string().min(1).max(63),
  /** Where the payer lands after paying. `{CHECKOUT_SESSION_ID}` in it is replaced by the session id. */
  success_url: ReturnUrl,
  /** Where the payer lands after giving up. */
  cancel_url: ReturnUrl,
});
export type CreateCheckoutRequest = z.infer<typeof CreateCheckoutRequest>;

export const CreateCheckoutResponse = z.object({
  /** Send the payer's browser here: the provider's payment page. */
  checkout_url: z.string(),
  /** The provider's id of this checkout. */
  session_id: z.string(),
  /** `stripe` or `sandbox`. */
  provider: z.string(),
  /** After this the checkout page no longer takes a payment. */
  expires_at: Timestamp,
});
export type CreateCheckoutResponse = z.infer<typeof CreateCheckoutResponse>;

/** Billing commands over NATS (the gateway authenticated the caller). */
export const BillingCallerCommand = z.object({ caller: UserContext, body: z.strictObject({}) });
export const CreateCheckoutCommand = z.object({
  caller: UserContext,
  body: CreateCheckoutRequest,
  /** `scheme://host[:port]` the client addressed: the base of the sandbox's checkout page URL. */
  origin: z.string(),
});

/** A payment provider's webhook delivery, passed through by the gateway untouched. */
export const WebhookCommand = z.object({
  provider: z.string(),
  /** The exact body bytes, base64: signatures cover them. */
  body_base64: z.string(),
  /** The request's headers, names in lower case (credentials and cookies left out). */
  headers: z.record(z.string(), z.string()),
});

export const WebhookReply = z.object({
  /** The provider's event id. */
  event_id: z.string(),
  /** True when this event was received before: nothing changed this time. */
  duplicate: z.boolean(),
  /** `applied` (the subscription changed) or `ignored` (an event type, business or order that changes nothing). */
  outcome: z.enum(["applied", "ignored"]),
});
export type WebhookReply = z.infer<typeof WebhookReply>;

/** Where payment providers post their events: `POST /api/compute/billing/webhooks/{provider}` (no X-App-ID, no credential; the signature is the proof). */
export const BILLING_WEBHOOK_ROUTE = "/api/compute/billing/webhooks/:provider";
export function billingWebhookPath(provider: string): string {
  return `/api/compute/billing/webhooks/${provider}`;
}

/** The header of a sandbox webhook's signature: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const SANDBOX_SIGNATURE_HEADER = "cjs-sandbox-signature";

/** The sandbox provider's checkout page (`GET` shows it, a form `POST` pays or cancels). */
export const SANDBOX_CHECKOUT_ROUTE = "/sandbox/checkout/:sessionId";
export function sandboxCheckoutPath(sessionId: string): string {
  return `/sandbox/checkout/${sessionId}`;
}

/** The sandbox provider's checkout page, by session id. */
export const SandboxSessionCommand = z.object({ session_id: z.string().max(200) });
export const SandboxSessionView = z.object({
  plan: PublicPlan,
  state: z.enum(["open", "paid", "completed", "canceled"]),
  expires_at: Timestamp,
});
export type SandboxSessionView = z.infer<typeof SandboxSessionView>;

export const SandboxActionCommand = z.object({ session_id: z.string().max(200), action: z.enum(["pay", "cancel"]) });
export const SandboxActionReply = z.object({
  /** Where to send the browser next (`success_url` or `cancel_url`). */
  redirect_url: z.string(),
  /** For `pay`: the signed webhook delivery to post to the sandbox webhook endpoint. */
  delivery: z.object({ body: z.string(), signature: z.string() }).nullable(),
});
export type SandboxActionReply = z.infer<typeof SandboxActionReply>;
