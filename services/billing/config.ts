import { z } from "zod";
import { BaseConfig, intSetting, parseConfig } from "../../shared/runtime/index.js";
import { DEFAULT_PLANS_FILE } from "./plans/plan-catalog.js";

export const BillingConfig = BaseConfig.extend({
  /** Where `/metrics`, `/healthz` and `/readyz` listen. */
  CJS_OPS_HOST: z.string().default("0.0.0.0"),
  CJS_OPS_PORT: intSetting(9104, { min: 0, max: 65535 }),
  /** The plans file (JSON): plans, their rates and limits, and the default plan. */
  CJS_BILLING_PLANS_FILE: z.string().min(1).default(DEFAULT_PLANS_FILE),
});
export type BillingConfig = z.infer<typeof BillingConfig>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<BillingConfig> {
  return parseConfig(BillingConfig, env);
}
