import { RPC_ROUTES } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { decoyPasswordHash, verifyPassword } from "../identity/passwords.js";
import { guardKeys, signIn } from "../identity/sign-in.js";
import { findUserByEmail, isDisabled } from "../identity/users.js";

/** `POST /api/auth/LOGIN_EMAIL`: an unknown e-mail, a wrong password and a disabled user cost the same time and get the same answer. */
export function login(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.login> {
  return async ({ email, password }, { app, ip }) => {
    const keys = guardKeys(gw, app.app_id, email, ip);
    await gw.guard.check(keys);
    const user = await findUserByEmail(gw.store, app.app_id, email);
    const matches = await verifyPassword(password, user?.password_hash ?? (await decoyPasswordHash()));
    if (!user || !matches || isDisabled(user)) {
      await gw.guard.recordFailure(keys);
      throw new AppError("auth.login_failed", "The e-mail or the password is wrong.");
    }
    await gw.guard.clear(keys[0]);
    return signIn(gw, user);
  };
}
