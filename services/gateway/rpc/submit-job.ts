import { DryRunPlan, RPC_ROUTES, type DryRunRateLimit } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { requestRpc, subjects } from "../../../shared/nats/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { forward, userContext } from "./forward.js";

/**
 * Submit, forwarded to the scheduler. A dry run asks the scheduler the same way (it
 * answers what the submit would do) and adds the caller's rate-limit room, which only
 * the gateway knows: read, not counted (the dry-run call itself was counted as any call).
 */
export function submitJob(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.submitJob> {
  const submit = forward(gw, RPC_ROUTES.submitJob, subjects.jobSubmit());
  return async (body, context) => {
    if (!body.dry_run) return submit(body, context);
    const { caller, trace } = context;
    if (!caller) throw new AppError("auth.missing_credentials");
    const [plan, window] = await Promise.all([
      requestRpc(gw.nc, subjects.jobSubmit(), { caller: userContext(caller), body }, DryRunPlan, { trace }),
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
