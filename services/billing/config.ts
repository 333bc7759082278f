import { z } from "zod";
import { BaseConfig, intSetting, parseConfig, opsSettings } from "../../shared/runtime/index.js";

const optionalSecret = z.preprocess((value) => (value === "" ? undefined : value), z.string().min(1).optional());

export const BillingConfig = BaseConfig.extend({
  ...opsSettings(9104),
  /** A plans file replacing the shipped `services/billing/plans.json`. */
  CJS_BILLING_PLANS_FILE: z.preprocess((value) => (value === "" ? undefined : value), z.string().min(1).optional()),
  /** Stripe's secret API key (`sk_live_…`, `sk_test_…` or a restricted `rk_…`). Set: checkouts go to Stripe. Unset: the sandbox provider. */
  CJS_STRIPE_SECRET_KEY: optionalSecret,
  /** The signing secret (`whsec_…`) of the Stripe webhook endpoint; required with CJS_STRIPE_SECRET_KEY. */
  CJS_STRIPE_WEBHOOK_SECRET: optionalSecret,
  /** Stripe's API base URL; only to point the client at a stand-in (tests, stripe-mock). */
  CJS_STRIPE_API_URL: z.preprocess(
    (value) => (value === "" ? undefined : value),
    z.url({ protocol: /^https?$/ }).optional(),
  ),
  /** How long a sandbox checkout page takes a payment. */
  CJS_CHECKOUT_SESSION_TTL_SECONDS: intSetting(1800, { min: 60, max: 86_400 }),
  /** How far a webhook signature's timestamp may be from now, either way. */
  CJS_WEBHOOK_TOLERANCE_SECONDS: intSetting(300, { min: 10, max: 3600 }),
  /**
   * How old an attempt's end must be before the ledger audit charges it when metering has
   * not: metering goes first. Also how long the audit waits while metering still holds a
   * message for the job.
   */
  CJS_LEDGER_AUDIT_GRACE_MS: intSetting(60_000, { min: 100, max: 86_400_000 }),
}).superRefine((config, ctx) => {
  if (config.CJS_STRIPE_SECRET_KEY !== undefined && config.CJS_STRIPE_WEBHOOK_SECRET === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["CJS_STRIPE_WEBHOOK_SECRET"],
      message: "required when CJS_STRIPE_SECRET_KEY is set (the webhook signing secret, whsec_…)",
    });
  }
});
export type BillingConfig = z.infer<typeof BillingConfig>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<BillingConfig> {
  return parseConfig(BillingConfig, env);
}
