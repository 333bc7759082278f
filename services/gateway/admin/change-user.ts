import type { AdminSetUserRoleRequest, AdminUserRef, User } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { changeUser } from "../identity/users-changes.js";
import { publicUser } from "../identity/users.js";

/**
 * Operator commands `users disable`, `users enable` and `users set-role`: like a business
 * admin's, but across the app, and free to leave a business without an admin.
 */
export function changeUserOfApp(gw: GatewayContext, kind: "disable" | "enable") {
  return async ({ app_id, user_id }: AdminUserRef): Promise<User> =>
    publicUser(await changeUser(gw, { app_id }, user_id, { kind }));
}

export function setRoleOfUser(gw: GatewayContext) {
  return async ({ app_id, user_id, role }: AdminSetUserRoleRequest): Promise<User> =>
    publicUser(await changeUser(gw, { app_id }, user_id, { kind: "set_role", role }));
}
