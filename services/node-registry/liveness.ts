import type { NodeStatus } from "../../shared/contract/index.js";
import { type NodeRecord, nodeStatus } from "../../shared/records/index.js";
import type { NodeRegistryConfig } from "./config.js";

type LivenessConfig = Pick<NodeRegistryConfig, "CJS_HEARTBEAT_INTERVAL_SECONDS" | "CJS_HEARTBEAT_MISSES_OFFLINE">;

/** True once the node has missed the configured number of heartbeat intervals. */
export function heartbeatOverdue(node: NodeRecord, nowMs: number, config: LivenessConfig): boolean {
  const lastSignMs = Date.parse(node.last_heartbeat_at ?? node.created_at);
  return nowMs - lastSignMs > config.CJS_HEARTBEAT_MISSES_OFFLINE * config.CJS_HEARTBEAT_INTERVAL_SECONDS * 1000;
}

/** The state callers see: an overdue node is offline even before a sweep has recorded it. */
export function effectiveStatus(node: NodeRecord, nowMs: number, config: LivenessConfig): NodeStatus {
  return heartbeatOverdue(node, nowMs, config) ? "offline" : nodeStatus(node);
}
