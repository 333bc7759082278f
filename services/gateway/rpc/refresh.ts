import { RPC_ROUTES } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { endedByUser } from "../identity/sessions.js";
import { accessTokenFor } from "../identity/sign-in.js";
import { isDisabled } from "../identity/users.js";

/** `POST /api/auth/refresh`: rotates the refresh token; the user's current role goes into the new access token. A disabled user, or a session its user ended, is refused. */
export function refresh(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.refresh> {
  return async ({ refresh_token }, { app }) => {
    const { session, refreshToken } = await gw.sessions.rotate(refresh_token, app.app_id);
    const user = await gw.store.users.get(session.user_id);
    if (!user || isDisabled(user.value) || endedByUser(session, user.value))
      throw new AppError("auth.refresh_invalid", "The refresh token is not valid; sign in again.");
    return {
      access_token: await accessTokenFor(gw, user.value, session.session_id),
      refresh_token: refreshToken,
      token_type: "Bearer",
      expires_in: gw.tokens.ttlSeconds,
    };
  };
}
