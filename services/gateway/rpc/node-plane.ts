import type { RpcName, RpcRoutes } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { actorContext, forward, nodeContext } from "./forward.js";
import { pollNode } from "./poll.js";
import { registerNode } from "./register-node.js";
import { reportResult } from "./report-result.js";
import { rotateNodeKey } from "./rotate-node-key.js";

/** The node-plane operations an agent or a user calls about nodes. */
export type NodePlaneName =
  | "registerNode"
  | "heartbeat"
  | "poll"
  | "result"
  | "pushLogs"
  | "drainNode"
  | "listNodes"
  | "rotateNodeKey";

export type HandlerTable<N extends RpcName> = { [K in N]: RpcHandler<RpcRoutes[K]> };

/**
 * The handlers of the node plane, built once and served by both transports: HTTP
 * (`app.ts`) and the NATS-direct listener (`node-nats/`), so the two cannot drift apart.
 * `stopping` aborts when the gateway shuts down: long polls then end at once.
 */
export function nodePlaneHandlers(gw: GatewayContext, stopping?: AbortSignal): HandlerTable<NodePlaneName> {
  return {
    registerNode: registerNode(gw),
    heartbeat: forward(gw, "heartbeat", nodeContext),
    poll: pollNode(gw, stopping),
    result: reportResult(gw),
    pushLogs: forward(gw, "pushLogs", nodeContext),
    drainNode: forward(gw, "drainNode", actorContext),
    listNodes: forward(gw, "listNodes"),
    rotateNodeKey: rotateNodeKey(gw),
  };
}
