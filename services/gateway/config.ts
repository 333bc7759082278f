import { z } from "zod";
import { BaseConfig, intSetting, parseConfig } from "../../shared/runtime/index.js";

export const GatewayConfig = BaseConfig.extend({
  CJS_HOST: z.string().default("0.0.0.0"),
  CJS_PORT: intSetting(8080, { min: 0, max: 65535 }),
  /** Largest JSON body accepted, in bytes. */
  CJS_MAX_BODY_BYTES: intSetting(1_048_576, { min: 1024 }),
  /** `iss` and `aud` of the access tokens this service issues and accepts. */
  CJS_JWT_ISSUER: z.string().min(1).default("compute-job-service"),
  CJS_JWT_AUDIENCE: z.string().min(1).default("compute-job-service-api"),
  CJS_ACCESS_TOKEN_TTL_SECONDS: intSetting(900, { min: 60, max: 86_400 }),
  CJS_REFRESH_TOKEN_TTL_SECONDS: intSetting(30 * 86_400, { min: 3600, max: 90 * 86_400 }),
  /** Failed sign-ins (per account and per address) before each try must wait; doubles per failure. */
  CJS_LOGIN_SLOW_AFTER_FAILURES: intSetting(3, { min: 1, max: 100 }),
  /** Failed sign-ins after which the account or address is locked for CJS_LOGIN_LOCK_SECONDS. */
  CJS_LOGIN_LOCK_AFTER_FAILURES: intSetting(10, { min: 2, max: 1000 }),
  CJS_LOGIN_LOCK_SECONDS: intSetting(900, { min: 1, max: 86_400 }),
  /** SMTP server for one-time codes, e.g. `smtps://user:pass@mail.example.com`. Unset: codes go to the log (dev outbox). */
  CJS_SMTP_URL: z.url().optional(),
  CJS_SMTP_FROM: z.string().default("Compute Job Service <no-reply@localhost>"),
});
export type GatewayConfig = z.infer<typeof GatewayConfig>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<GatewayConfig> {
  return parseConfig(GatewayConfig, env);
}
