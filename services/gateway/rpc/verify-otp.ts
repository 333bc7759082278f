import { RPC_ROUTES } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { guardKeys, signIn } from "../identity/sign-in.js";
import { otpKey } from "../identity/otp.js";
import { findUserByEmail, isDisabled } from "../identity/users.js";

/** `POST /api/auth/verify-otp`: a right sign-in code signs in once (never a disabled user); wrong codes count towards the sign-in lock. */
export function verifyOtp(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.verifyOtp> {
  return async ({ email, code }, { app, ip }) => {
    const keys = guardKeys(gw, app.app_id, email, ip);
    await gw.guard.check(keys);
    const accepted = await gw.otps.consume(otpKey("sign_in", app.app_id, email), code);
    const user = accepted ? await findUserByEmail(gw.store, app.app_id, email) : null;
    if (!user || isDisabled(user)) {
      await gw.guard.recordFailure(keys);
      throw new AppError("auth.otp_invalid", "The code is wrong, expired or already used; request a new one.");
    }
    await gw.guard.clear(keys[0]);
    return signIn(gw, user);
  };
}
