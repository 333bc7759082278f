import type { z } from "zod";
import type { ListNodesCommand, ListNodesResponse } from "../../shared/contract/index.js";
import type { NodeRecord } from "../../shared/records/index.js";
import { summarizeNode } from "./node-summary.js";
import { ownsNode } from "./owned-node.js";
import type { RegistryContext } from "./registry-context.js";
import { readAllNodes } from "./read-all-nodes.js";

/** `nodes list`: every node of the caller's business, newest first, filtered by state and pool. */
export function listNodes(ctx: RegistryContext) {
  return async ({ caller, body }: z.infer<typeof ListNodesCommand>): Promise<ListNodesResponse> => {
    const owned = (await readAllNodes(ctx)).filter((node) => ownsNode(caller, node.value)).map((node) => node.value);
    const summaries = await Promise.all(owned.sort(newestFirst).map((node) => summarizeNode(ctx, node)));
    return {
      items: summaries.filter(
        (node) => (body.state === undefined || node.state === body.state) && (body.pool_id === undefined || node.pool_id === body.pool_id),
      ),
    };
  };
}

function newestFirst(a: NodeRecord, b: NodeRecord): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
  return a.node_id < b.node_id ? 1 : -1;
}
