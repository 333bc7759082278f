import type { NodeStatus } from "../../shared/contract/index.js";
import { type NodeRecord, nodeStatus } from "../../shared/records/index.js";
import type { NodeRegistryConfig } from "./config.js";

type LivenessConfig = Pick<NodeRegistryConfig, "CJS_HEARTBEAT_INTERVAL_SECONDS" | "CJS_HEARTBEAT_MISSES_OFFLINE">;

function offlineWindowMs(config: LivenessConfig): number {
  return config.CJS_HEARTBEAT_MISSES_OFFLINE * config.CJS_HEARTBEAT_INTERVAL_SECONDS * 1000;
}

function lastSignMs(node: NodeRecord): number {
  return Date.parse(node.last_heartbeat_at ?? node.created_at);
}

/** True once the node has missed the configured number of heartbeat intervals. */
export function heartbeatOverdue(node: NodeRecord, nowMs: number, config: LivenessConfig): boolean {
  return nowMs - lastSignMs(node) > offlineWindowMs(config);
}

/** The state callers see: an overdue node is offline even before a sweep has recorded it. */
export function effectiveStatus(node: NodeRecord, nowMs: number, config: LivenessConfig): NodeStatus {
  return heartbeatOverdue(node, nowMs, config) ? "offline" : nodeStatus(node);
}

/**
 * How long the node has been offline (0 when it is not): since a sweep recorded it, or,
 * before any sweep did, since its heartbeats became overdue.
 */
export function offlineForMs(node: NodeRecord, nowMs: number, config: LivenessConfig): number {
  if (effectiveStatus(node, nowMs, config) !== "offline") return 0;
  const sinceMs = node.offline_at !== null ? Date.parse(node.offline_at) : lastSignMs(node) + offlineWindowMs(config);
  return Math.max(0, nowMs - sinceMs);
}
