import type { NodeSummary } from "../../shared/contract/index.js";
import { type AllocationRecord, allocationUse, type NodeRecord } from "../../shared/records/index.js";
import { effectiveStatus } from "./liveness.js";
import type { RegistryContext } from "./registry-context.js";

/** A node as callers see it, from its record and its allocation (null when nothing is allocated). */
export function toNodeSummary(
  ctx: RegistryContext,
  node: NodeRecord,
  allocation: AllocationRecord | null,
): NodeSummary {
  return {
    node_id: node.node_id,
    name: node.name,
    hostname: node.hostname,
    pool_id: node.pool_id,
    labels: node.labels,
    capacity: node.capacity,
    used: allocationUse(allocation),
    job_types: node.job_types,
    quotas: node.quotas ?? null,
    agent_version: node.agent_version,
    state: effectiveStatus(node, ctx.clock.now(), ctx.config),
    last_heartbeat_at: node.last_heartbeat_at,
    created_at: node.created_at,
  };
}

/** Reads the node's allocation and summarises it. */
export async function summarizeNode(ctx: RegistryContext, node: NodeRecord): Promise<NodeSummary> {
  const allocation = await ctx.store.allocations.get(node.node_id);
  return toNodeSummary(ctx, node, allocation?.value ?? null);
}
