import { RPC_ROUTES } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { otpKey } from "../identity/otp.js";
import { hashPassword } from "../identity/passwords.js";
import { endSessionsOfUser } from "../identity/sessions.js";
import { guardKeys } from "../identity/sign-in.js";
import { findUserByEmail, isDisabled } from "../identity/users.js";

const refused = () =>
  new AppError("auth.otp_invalid", "The code is wrong, expired or already used; request a new one.");

/**
 * `POST /api/auth/password/reset/confirm`: a right reset (or invitation) code sets the
 * password once and ends every session of the user; an invited user becomes active.
 * Wrong codes count towards the sign-in lock, as in verify-otp.
 */
export function confirmPasswordReset(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.confirmPasswordReset> {
  return async ({ email, code, new_password }, { app, ip }) => {
    const keys = guardKeys(gw, app.app_id, email, ip);
    await gw.guard.check(keys);
    const accepted = await gw.otps.consume(otpKey("password_reset", app.app_id, email), code);
    const user = accepted ? await findUserByEmail(gw.store, app.app_id, email) : null;
    if (!user || isDisabled(user)) {
      await gw.guard.recordFailure(keys);
      throw refused();
    }
    const passwordHash = await hashPassword(new_password);
    const stored = await gw.store.users.mutate(user.user_id, (current) =>
      isDisabled(current)
        ? undefined
        : { ...current, password_hash: passwordHash, status: "active", ...endSessionsOfUser(current) },
    );
    gw.authenticator.forgetUser(user.user_id);
    if (!stored || isDisabled(stored.value)) throw refused();
    await gw.guard.clear(keys[0]);
    return { password_reset: true };
  };
}
