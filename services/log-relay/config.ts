import { z } from "zod";
import { BaseConfig, intSetting, parseConfig } from "../../shared/runtime/index.js";

export const LogRelayConfig = BaseConfig.extend({
  /** Where `/metrics`, `/healthz` and `/readyz` listen. */
  CJS_OPS_HOST: z.string().default("0.0.0.0"),
  CJS_OPS_PORT: intSetting(9103, { min: 0, max: 65535 }),
  /** How long log lines are kept. */
  CJS_LOG_RETENTION_DAYS: intSetting(7, { min: 1, max: 3650 }),
  /** Lines kept per job, over all its attempts; later lines are dropped and counted. */
  CJS_LOG_MAX_LINES_PER_JOB: intSetting(100_000, { min: 1, max: 100_000_000 }),
});
export type LogRelayConfig = z.infer<typeof LogRelayConfig>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<LogRelayConfig> {
  return parseConfig(LogRelayConfig, env);
}
