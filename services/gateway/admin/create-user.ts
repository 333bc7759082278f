import type { CreateUserRequest, User } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { hashPassword } from "../identity/passwords.js";
import { newUserRecord, publicUser, storeNewUser } from "../identity/users.js";

/** Operator command `user create`: an active user who can sign in with the password at once. */
export function createUser(gw: GatewayContext) {
  return async ({ app_id, business_id, email, password, role }: CreateUserRequest): Promise<User> => {
    const business = await gw.store.businesses.get(business_id);
    if (!business || business.value.app_id !== app_id)
      throw new AppError("resource.not_found", `No business ${business_id} in application ${app_id}.`);
    const record = newUserRecord(
      { app_id, business_id, email, role, status: "active", password_hash: await hashPassword(password) },
      gw.clock.now(),
    );
    await storeNewUser(gw.store, record);
    return publicUser(record);
  };
}
