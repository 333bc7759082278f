import { z } from "zod";
import { BaseConfig, boolSetting, intSetting, parseConfig, opsSettings } from "../../shared/runtime/index.js";

/** Seconds between tries of a delivery: each pause once, the last one repeated until the retry window ends. */
const RetrySchedule = z
  .string()
  .regex(/^\d+(,\d+)*$/, "must be whole seconds separated by commas, such as 10,30,60")
  .transform((text) => text.split(",").map(Number))
  .refine(
    (pauses) => pauses.every((seconds) => seconds >= 1 && seconds <= 86_400),
    "each pause must be 1 to 86400 seconds",
  );

export const WebhooksConfig = BaseConfig.extend({
  ...opsSettings(9105),
  /** Allows webhook URLs on loopback, link-local and private addresses (tests and `make dev`); refused otherwise. */
  CJS_WEBHOOKS_ALLOW_PRIVATE_URLS: boolSetting(false),
  /**
   * The key every webhook's signing secret is derived from (at least 32 characters). Unset:
   * one is generated and kept in the `cjs_webhook_keys` bucket. Changing it changes every secret.
   */
  CJS_WEBHOOK_SECRET_KEY: z.preprocess(
    (value) => (value === "" ? undefined : value),
    z.string().min(32, "must be at least 32 characters").optional(),
  ),
  /** How long one POST may take before it counts as failed. */
  CJS_WEBHOOK_TIMEOUT_MS: intSetting(10_000, { min: 100, max: 120_000 }),
  /** Pauses between tries of a delivery, in seconds; the last repeats. */
  CJS_WEBHOOK_RETRY_SCHEDULE_SECONDS: RetrySchedule.default([10, 30, 60, 300, 900, 1800, 3600]),
  /** How long after its event a delivery is tried before it is marked failed. */
  CJS_WEBHOOK_RETRY_WINDOW_SECONDS: intSetting(86_400, { min: 1, max: 7 * 86_400 }),
});
export type WebhooksConfig = z.infer<typeof WebhooksConfig>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<WebhooksConfig> {
  return parseConfig(WebhooksConfig, env);
}
