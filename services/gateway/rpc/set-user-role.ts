import { RPC_ROUTES } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { changeUser, requireBusinessAdmin } from "../identity/users-changes.js";
import { userSummary } from "../identity/users.js";

/** `POST /api/compute/users/set-role` (business admins): takes effect at once on every replica, for sessions and API keys alike. */
export function setUserRole(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.setUserRole> {
  return async ({ user_id, role }, { caller }) => {
    requireBusinessAdmin(caller);
    return userSummary(await changeUser(gw, caller, user_id, { kind: "set_role", role }, caller));
  };
}
