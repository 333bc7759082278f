import { type DryRunRateLimit, type RPC_ROUTES } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { requestRpc } from "../../../shared/nats/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { userContext } from "./forward.js";

/**
 * Submit, forwarded to the scheduler. A dry run asks the scheduler the same way (it
 * answers what the submit would do) and adds the caller's rate-limit room, which only
 * the gateway knows: read, not counted (the dry-run call itself was counted as any call).
 * Each answer is read with its own schema, so a submit pays for no check of the other.
 */
export function submitJob(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.submitJob> {
  return async (body, { caller, trace }) => {
    if (!caller) throw new AppError("auth.missing_credentials");
    const command = { caller: userContext(caller), body };
    if (!body.dry_run) return requestRpc(gw.nc, "jobSubmit", command, { trace });
    const [plan, window] = await Promise.all([
      requestRpc(gw.nc, "jobDryRun", command, { trace }),
      gw.rateLimiter.headroom(caller),
    ]);
    const rate_limit: DryRunRateLimit | null = window && {
      window: window.window,
      limit: window.limit,
      remaining: window.remaining,
      reset_seconds: Math.max(0, Math.ceil(window.resetMs / 1000)),
    };
    return { ...plan, rate_limit };
  };
}
