import { z } from "zod";
import { BaseConfig, intSetting, parseConfig } from "../../shared/runtime/index.js";

export const NodeRegistryConfig = BaseConfig.extend({
  /** Where `/metrics`, `/healthz` and `/readyz` listen. */
  CJS_OPS_HOST: z.string().default("0.0.0.0"),
  CJS_OPS_PORT: intSetting(9102, { min: 0, max: 65535 }),
});
export type NodeRegistryConfig = z.infer<typeof NodeRegistryConfig>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<NodeRegistryConfig> {
  return parseConfig(NodeRegistryConfig, env);
}
