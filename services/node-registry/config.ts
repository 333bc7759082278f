import { z } from "zod";
import { checkSharedPools, PoolSettings } from "../../shared/records/index.js";
import { BaseConfig, intSetting, parseConfig, opsSettings } from "../../shared/runtime/index.js";

export const NodeRegistryConfig = BaseConfig.extend({
  ...opsSettings(9102),
  /** How often a node must heartbeat; told to every node at registration and in each heartbeat reply. */
  CJS_HEARTBEAT_INTERVAL_SECONDS: intSetting(30, { min: 1, max: 3600 }),
  /** A node that missed this many heartbeat intervals in a row is offline. */
  CJS_HEARTBEAT_MISSES_OFFLINE: intSetting(3, { min: 1, max: 1000 }),
  ...PoolSettings.shape,
  /** `nodes/list` leaves out a node offline for longer than this, unless asked to include it. */
  CJS_NODES_HIDE_OFFLINE_AFTER_SECONDS: intSetting(86_400, { min: 0, max: 31_536_000 }),
  /** How often each replica scans for nodes that missed their heartbeats. */
  CJS_LIVENESS_SWEEP_MS: intSetting(5000, { min: 100, max: 86_400_000 }),
}).superRefine(checkSharedPools);
export type NodeRegistryConfig = z.infer<typeof NodeRegistryConfig>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<NodeRegistryConfig> {
  return parseConfig(NodeRegistryConfig, env);
}
