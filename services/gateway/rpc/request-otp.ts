import { RPC_ROUTES } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { OTP_TTL_SECONDS, otpKey } from "../identity/otp.js";
import { findUserByEmail, isDisabled } from "../identity/users.js";

/**
 * `POST /api/auth/request-otp`: answers the same whether or not the address has an
 * account (a disabled one is sent nothing); the code is delivered off the request path so timing tells nothing either.
 */
export function requestOtp(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.requestOtp> {
  return async ({ email }, { app, log }) => {
    const send = gw.sendOtp;
    if (!send)
      throw new AppError("service.unavailable", "Sign-in by one-time code is not configured on this service.", {
        retryAfterSeconds: 3600,
      });
    const user = await findUserByEmail(gw.store, app.app_id, email);
    if (user && !isDisabled(user)) {
      const code = await gw.otps.issue(otpKey("sign_in", app.app_id, email));
      send(user.email, code).catch((error: unknown) => log.error({ err: error }, "could not deliver a one-time code"));
    }
    return { expires_in: OTP_TTL_SECONDS };
  };
}
