import { RPC_ROUTES } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { requireBusinessAdmin } from "../identity/users-changes.js";
import { userSummary, usersOf } from "../identity/users.js";

/** `POST /api/compute/users/list` (business admins): the caller's business's users by id, a page at a time. */
export function listUsers(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.listUsers> {
  return async ({ limit, cursor }, { caller }) => {
    requireBusinessAdmin(caller);
    const { users, more } = await usersOf(
      gw.store,
      { appId: caller.app_id, businessId: caller.business_id },
      { after: cursor, limit },
    );
    return { items: users.map(userSummary), next_cursor: more ? (users.at(-1)?.user_id ?? null) : null };
  };
}
