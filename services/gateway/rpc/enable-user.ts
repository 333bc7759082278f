import { RPC_ROUTES } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { changeUser, requireBusinessAdmin } from "../identity/users-changes.js";
import { userSummary } from "../identity/users.js";

/** `POST /api/compute/users/enable` (business admins): the user may sign in again and its API keys work again. Idempotent. */
export function enableUser(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.enableUser> {
  return async ({ user_id }, { caller }) => {
    requireBusinessAdmin(caller);
    return userSummary(await changeUser(gw, caller, user_id, { kind: "enable" }, caller));
  };
}
