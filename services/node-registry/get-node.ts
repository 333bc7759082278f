import type { z } from "zod";
import type { NodeRefCommand, NodeReply } from "../../shared/contract/index.js";
import { summarizeNode } from "./node-summary.js";
import { readOwnedNode } from "./owned-node.js";
import type { RegistryContext } from "./registry-context.js";

/** One node of the caller's business; another tenant's node is not found. */
export function getNode(ctx: RegistryContext) {
  return async ({ caller, node_id }: z.infer<typeof NodeRefCommand>): Promise<NodeReply> => {
    const stored = await readOwnedNode(ctx, caller, node_id);
    return { node: await summarizeNode(ctx, stored.value) };
  };
}
