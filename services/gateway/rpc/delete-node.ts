import { DeleteNodeReply, RPC_ROUTES } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { requestRpc } from "../../../shared/nats/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { retireNodeKeys } from "../identity/node-keys.js";
import { userContext } from "./forward.js";

/**
 * `POST /api/compute/nodes/delete`: the node-registry deletes the offline node (it alone
 * knows its state), then its keys are revoked here, where they live. A crash between the
 * two leaves keys that already do nothing (every node-plane call needs the node's record);
 * the same call again answers not found and revokes them on its way, since a node's keys
 * are the tenant's own records.
 */
export function deleteNode(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.deleteNode> {
  return async (body, { caller, trace }) => {
    const tenant = { app_id: caller.app_id, business_id: caller.business_id };
    let deleted: DeleteNodeReply;
    try {
      deleted = await requestRpc(gw.nc, "nodeDelete", { caller: userContext(caller), body }, { trace });
    } catch (error) {
      if (error instanceof AppError && error.code === "resource.not_found")
        await retireNodeKeys(gw, tenant, body.node_id);
      throw error;
    }
    const keysRetired = await retireNodeKeys(gw, tenant, deleted.node_id);
    return { node_id: deleted.node_id, deleted_at: deleted.deleted_at, keys_retired: keysRetired };
  };
}
