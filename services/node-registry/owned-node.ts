import { isId } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import type { Versioned } from "../../shared/nats/index.js";
import type { NodeRecord } from "../../shared/records/index.js";
import type { RegistryContext } from "./registry-context.js";

/** Whose records a caller may see: its application and business. */
export interface Tenant {
  app_id: string;
  business_id: string;
}

export function ownsNode(tenant: Tenant, node: NodeRecord): boolean {
  return node.app_id === tenant.app_id && node.business_id === tenant.business_id;
}

/** Another tenant's node is answered exactly like a missing one. */
export function nodeNotFound(nodeId: string): AppError {
  // A malformed id is not repeated back: it is whatever the caller sent.
  return new AppError("resource.not_found", isId("node", nodeId) ? `No node ${nodeId}.` : "No such node.");
}

/** The node, when it exists and is the tenant's; otherwise `resource.not_found`. */
export async function readOwnedNode(
  ctx: RegistryContext,
  tenant: Tenant,
  nodeId: string,
): Promise<Versioned<NodeRecord>> {
  // A malformed id cannot be a KV key: it names no node.
  const stored = isId("node", nodeId) ? await ctx.store.nodes.get(nodeId) : null;
  if (!stored || !ownsNode(tenant, stored.value)) throw nodeNotFound(nodeId);
  return stored;
}

/**
 * Changes the tenant's node by compare-and-set. `change` may return undefined to leave it as
 * it is; another tenant's node is never changed and is answered as not found.
 */
export async function mutateOwnedNode(
  ctx: RegistryContext,
  tenant: Tenant,
  nodeId: string,
  change: (node: NodeRecord) => NodeRecord | undefined,
): Promise<NodeRecord> {
  if (!isId("node", nodeId)) throw nodeNotFound(nodeId);
  const stored = await ctx.store.nodes.mutate(nodeId, (node) => (ownsNode(tenant, node) ? change(node) : undefined));
  if (!stored || !ownsNode(tenant, stored.value)) throw nodeNotFound(nodeId);
  return stored.value;
}
