import { z } from "zod";
import { BaseConfig, intSetting, parseConfig } from "../../shared/runtime/index.js";

export const LogRelayConfig = BaseConfig.extend({
  /** Where `/metrics`, `/healthz` and `/readyz` listen. */
  CJS_OPS_HOST: z.string().default("0.0.0.0"),
  CJS_OPS_PORT: intSetting(9103, { min: 0, max: 65535 }),
});
export type LogRelayConfig = z.infer<typeof LogRelayConfig>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<LogRelayConfig> {
  return parseConfig(LogRelayConfig, env);
}
