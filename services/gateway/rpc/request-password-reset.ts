import { RPC_ROUTES } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { OTP_TTL_SECONDS, otpKey } from "../identity/otp.js";
import { findUserByEmail, isDisabled } from "../identity/users.js";

/**
 * `POST /api/auth/password/reset/request`: like request-otp, the same answer whether or
 * not the address has an account (a disabled one is sent nothing), the code delivered
 * off the request path. The code is a reset code: it cannot sign in.
 */
export function requestPasswordReset(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.requestPasswordReset> {
  return async ({ email }, { app, log }) => {
    const send = gw.sendOtp;
    if (!send)
      throw new AppError("service.unavailable", "Password reset by e-mail is not configured on this service.", {
        retryAfterSeconds: 3600,
      });
    const user = await findUserByEmail(gw.store, app.app_id, email);
    if (user && !isDisabled(user)) {
      const code = await gw.otps.issue(otpKey("password_reset", app.app_id, email));
      send(user.email, code, "password_reset").catch((error: unknown) =>
        log.error({ err: error }, "could not deliver a password-reset code"),
      );
    }
    return { expires_in: OTP_TTL_SECONDS };
  };
}
