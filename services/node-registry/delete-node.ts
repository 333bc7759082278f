import type { z } from "zod";
import { type DeleteNodeCommand, type DeleteNodeReply, isId } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import type { ServedRequest } from "../../shared/nats/index.js";
import { effectiveStatus } from "./liveness.js";
import { nodeNotFound, ownsNode } from "./owned-node.js";
import type { RegistryContext } from "./registry-context.js";

/**
 * `nodes delete`: removes an offline node of the caller's business. A node that is online
 * or draining is refused with its state; the delete is a compare-and-set, so a heartbeat
 * that lands first brings the node back and wins. The scheduler's watch drops the deleted
 * node (and requeues anything still allocated to it); the gateway retires its keys.
 */
export function deleteNode(ctx: RegistryContext) {
  return async (
    { caller, body }: z.infer<typeof DeleteNodeCommand>,
    { log }: ServedRequest,
  ): Promise<DeleteNodeReply> => {
    // A malformed id cannot be a KV key: it names no node.
    if (!isId("node", body.node_id)) throw nodeNotFound(body.node_id);
    const deleted = await ctx.store.nodes.removeIf(body.node_id, (node) => {
      if (!ownsNode(caller, node)) throw nodeNotFound(body.node_id);
      const state = effectiveStatus(node, ctx.clock.now(), ctx.config);
      if (state !== "offline") {
        throw new AppError("state.conflict", `Node ${node.node_id} is ${state}; only an offline node can be deleted.`, {
          details: { state },
        });
      }
      return true;
    });
    if (!deleted) throw nodeNotFound(body.node_id);
    log.info({ node_id: body.node_id, business_id: caller.business_id }, "node deleted");
    return { node_id: body.node_id, deleted_at: new Date(ctx.clock.now()).toISOString() };
  };
}
