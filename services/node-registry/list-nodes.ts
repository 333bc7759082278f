import type { z } from "zod";
import type { ListNodesCommand, ListNodesRequest, ListNodesResponse } from "../../shared/contract/index.js";
import type { NodeRecord } from "../../shared/records/index.js";
import { offlineForMs } from "./liveness.js";
import { summarizeNode } from "./node-summary.js";
import { ownsNode } from "./owned-node.js";
import type { RegistryContext } from "./registry-context.js";
import { readAllNodes } from "./read-all-nodes.js";

/**
 * `nodes list`: every node of the caller's business, newest first, filtered by state and
 * pool. A node offline for longer than CJS_NODES_HIDE_OFFLINE_AFTER_SECONDS is left out
 * unless the request asks for offline nodes.
 */
export function listNodes(ctx: RegistryContext) {
  return async ({ caller, body }: z.infer<typeof ListNodesCommand>): Promise<ListNodesResponse> => {
    const nowMs = ctx.clock.now();
    const owned = (await readAllNodes(ctx))
      .map((node) => node.value)
      .filter((node) => ownsNode(caller, node) && (showsLongOffline(body) || !longOffline(ctx, node, nowMs)));
    const summaries = await Promise.all(owned.sort(newestFirst).map((node) => summarizeNode(ctx, node)));
    return {
      items: summaries.filter(
        (node) =>
          (body.state === undefined || node.state === body.state) &&
          (body.pool_id === undefined || node.pool_id === body.pool_id),
      ),
    };
  };
}

function showsLongOffline(body: ListNodesRequest): boolean {
  return body.include_offline || body.state === "offline";
}

function longOffline(ctx: RegistryContext, node: NodeRecord, nowMs: number): boolean {
  return offlineForMs(node, nowMs, ctx.config) > ctx.config.CJS_NODES_HIDE_OFFLINE_AFTER_SECONDS * 1000;
}

function newestFirst(a: NodeRecord, b: NodeRecord): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
  return a.node_id < b.node_id ? 1 : -1;
}
