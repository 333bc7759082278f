import type { AdminListUsersRequest, AdminListUsersResponse } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { publicUser, usersOf } from "../identity/users.js";

/** Operator command `users list`: every user of a business, or of the whole application. */
export function listUsersOfApp(gw: GatewayContext) {
  return async ({ app_id, business_id }: AdminListUsersRequest): Promise<AdminListUsersResponse> => {
    if (!(await gw.store.apps.get(app_id))) throw new AppError("resource.not_found", `No application ${app_id}.`);
    const { users } = await usersOf(gw.store, { appId: app_id, businessId: business_id });
    return { items: users.map(publicUser) };
  };
}
