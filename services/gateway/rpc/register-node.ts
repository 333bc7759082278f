import { RPC_ROUTES } from "../../../shared/contract/index.js";
import { requestRpc } from "../../../shared/nats/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { mintNodeKey } from "../identity/node-keys.js";
import { userContext } from "./forward.js";

/** `POST /api/compute/nodes/register`: the node-registry makes the node; the gateway mints its own key. */
export function registerNode(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.registerNode> {
  return async (body, { caller, trace }) => {
    const business = await gw.store.businesses.get(caller.business_id);
    const context = { ...userContext(caller), operator: business?.value.operator ?? false };
    const { node, heartbeat_interval_seconds } = await requestRpc(
      gw.nc,
      "nodeRegister",
      { caller: context, body },
      { trace },
    );
    const { key } = await mintNodeKey(gw, {
      app_id: caller.app_id,
      business_id: caller.business_id,
      user_id: caller.user_id,
      node_id: node.node_id,
      name: node.name,
    });
    return { node_id: node.node_id, api_key: key, heartbeat_interval_seconds };
  };
}
