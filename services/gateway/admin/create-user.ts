import type { CreateUserRequest, User } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { newId } from "../../../shared/runtime/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { hashPassword } from "../identity/passwords.js";
import { userEmailKey } from "../identity/users.js";

/**
 * Operator command `user create`. The e-mail index entry is created first, by KV create,
 * so two concurrent creates of one address cannot both succeed.
 */
export function createUser(gw: GatewayContext) {
  return async ({ app_id, business_id, email, password, role }: CreateUserRequest): Promise<User> => {
    const business = await gw.store.businesses.get(business_id);
    if (!business || business.value.app_id !== app_id) throw new AppError("resource.not_found", `No business ${business_id} in application ${app_id}.`);
    const user: User = { user_id: newId("usr"), app_id, business_id, email, role, created_at: new Date(gw.clock.now()).toISOString() };
    const passwordHash = await hashPassword(password);
    try {
      await gw.store.userEmails.create(userEmailKey(app_id, email), { user_id: user.user_id });
    } catch (error) {
      if (error instanceof AppError && error.code === "resource.already_exists") {
        throw new AppError("resource.already_exists", `A user with e-mail ${email} already exists in application ${app_id}.`);
      }
      throw error;
    }
    await gw.store.users.create(user.user_id, { ...user, password_hash: passwordHash });
    return user;
  };
}
