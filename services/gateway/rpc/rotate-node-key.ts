import { RPC_ROUTES } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { requestRpc } from "../../../shared/nats/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { mintNodeKey } from "../identity/node-keys.js";

/**
 * `POST /api/compute/nodes/rotate-key`: a new key for the node; every older key of the
 * node stops working after `grace_seconds` (at once with the default 0).
 */
export function rotateNodeKey(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.rotateNodeKey> {
  return async (body, { caller, trace }) => {
    const ownNode = caller.credential.kind === "node_key" ? caller.credential.node_id : undefined;
    const nodeId = body.node_id ?? ownNode;
    if (!nodeId)
      throw new AppError("request.invalid", "Name the node to rotate.", {
        details: { issues: [{ path: "node_id", message: "required with a user credential" }] },
      });
    if (ownNode !== undefined && nodeId !== ownNode)
      throw new AppError("permission.denied", "A node key can rotate only its own node's key.");
    const { node } = await requestRpc(
      gw.nc,
      "nodeGet",
      { caller: { app_id: caller.app_id, business_id: caller.business_id }, node_id: nodeId },
      { trace },
    );
    const expiresAt = new Date(gw.clock.now() + body.grace_seconds * 1000).toISOString();
    const { key } = await mintNodeKey(
      gw,
      {
        app_id: caller.app_id,
        business_id: caller.business_id,
        user_id: caller.user_id,
        node_id: node.node_id,
        name: node.name,
      },
      expiresAt,
    );
    return { node_id: node.node_id, api_key: key, previous_key_expires_at: expiresAt };
  };
}
