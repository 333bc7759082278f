import type { z } from "zod";
import { encodeJson, type ServedRequest, subjects } from "../../shared/nats/index.js";
import type { DrainNodeCommand, NodeReply } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { summarizeNode } from "./node-summary.js";
import { mutateOwnedNode } from "./owned-node.js";
import type { RegistryContext } from "./registry-context.js";

/**
 * `nodes drain`: a draining node gets no new assignments and finishes what it runs;
 * `draining: false` lifts the drain. A node's own key drains that node; a user names it.
 */
export function drainNode(ctx: RegistryContext) {
  return async ({ caller, body }: z.infer<typeof DrainNodeCommand>, { log }: ServedRequest): Promise<NodeReply> => {
    const nodeId = targetNode(caller, body.node_id);
    const now = new Date(ctx.clock.now()).toISOString();
    const node = await mutateOwnedNode(ctx, caller, nodeId, (current) =>
      current.draining === body.draining ? undefined : { ...current, draining: body.draining, updated_at: now },
    );
    log.info({ node_id: nodeId, draining: node.draining }, "node drain set");
    // A long poll of a node that drains ends at once: its agent takes nothing more and is waiting for it to stop.
    if (node.draining) ctx.nc.publish(subjects.nodeDraining(nodeId), encodeJson({ node_id: nodeId }));
    return { node: await summarizeNode(ctx, node) };
  };
}

function targetNode(caller: z.infer<typeof DrainNodeCommand>["caller"], bodyNodeId: string | undefined): string {
  if ("node_id" in caller) {
    if (bodyNodeId !== undefined && bodyNodeId !== caller.node_id) {
      throw new AppError("permission.denied", "A node's key may drain only that node.");
    }
    return caller.node_id;
  }
  if (bodyNodeId === undefined) {
    throw new AppError("request.invalid", "The request does not match the schema.", {
      details: { issues: [{ path: "node_id", message: "required with a user credential" }] },
    });
  }
  return bodyNodeId;
}
