import { RPC_ROUTES } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { hashPassword, verifyPassword } from "../identity/passwords.js";
import { endSessionsOfUser } from "../identity/sessions.js";
import { guardKeys } from "../identity/sign-in.js";

/**
 * `POST /api/compute/account/password/change` (signed-in session only): needs the current
 * password, counted by the sign-in guard of the account like a sign-in, so a stolen
 * session cannot guess it. Every other session of the user ends on every replica.
 */
export function changePassword(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.changePassword> {
  return async ({ current_password, new_password }, { app, caller, ip }) => {
    if (caller.credential.kind !== "jwt")
      throw new AppError("auth.jwt_required", "Changing the password needs a signed-in session.");
    const keptSession = caller.credential.session_id;
    const user = await gw.store.users.get(caller.user_id);
    if (!user)
      throw new AppError("auth.invalid_credentials", "The account of this session no longer exists; sign in again.");
    const keys = guardKeys(gw, app.app_id, user.value.email, ip);
    await gw.guard.check(keys);
    if (!(await verifyPassword(current_password, user.value.password_hash))) {
      await gw.guard.recordFailure(keys);
      throw new AppError("auth.password_incorrect", "The current password is wrong.");
    }
    await gw.guard.clear(keys[0]);
    const passwordHash = await hashPassword(new_password);
    await gw.store.users.mutate(caller.user_id, (current) => ({
      ...current,
      password_hash: passwordHash,
      ...endSessionsOfUser(current, keptSession),
    }));
    gw.authenticator.forgetUser(caller.user_id);
    return { password_changed: true };
  };
}
