import { RPC_ROUTES } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { changeUser, requireBusinessAdmin } from "../identity/users-changes.js";
import { userSummary } from "../identity/users.js";

/**
 * `POST /api/compute/users/disable` (business admins): the user's sessions end and its API
 * keys are refused on every replica at once; its nodes' keys keep working. Idempotent.
 */
export function disableUser(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.disableUser> {
  return async ({ user_id }, { caller }) => {
    requireBusinessAdmin(caller);
    return userSummary(await changeUser(gw, caller, user_id, { kind: "disable" }, caller));
  };
}
