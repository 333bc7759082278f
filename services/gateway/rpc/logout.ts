import { RPC_ROUTES } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";

/** `POST /api/auth/logout`: ends the session, so its refresh token and its access tokens stop working. */
export function logout(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.logout> {
  return async ({ refresh_token }, { app }) => {
    const sessionId = await gw.sessions.end(refresh_token, app.app_id);
    gw.authenticator.forgetSession(sessionId);
    return { logged_out: true };
  };
}
