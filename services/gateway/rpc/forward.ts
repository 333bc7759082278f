import type { z } from "zod";
import {
  hasLimits,
  type NodeContext,
  type QuotaLimits,
  type RpcRoute,
  type UserContext,
} from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { requestRpc } from "../../../shared/nats/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import type { Caller } from "../identity/authenticator.js";
import type { ApiKeyRecord } from "../identity/records.js";

/** The limits of a user's API key, as the scheduler enforces them; null when it has none. */
function keyQuotas(key: ApiKeyRecord): QuotaLimits | null {
  const limits = {
    maxJobsPerHour: key.maxJobsPerHour,
    maxConcurrentJobs: key.maxConcurrentJobs,
    allowedJobTypes: key.allowedJobTypes,
  };
  return hasLimits(limits) ? limits : null;
}

/** The caller as the services behind the gateway see it. */
export function userContext(caller: Caller): UserContext {
  return {
    app_id: caller.app_id,
    business_id: caller.business_id,
    user_id: caller.user_id,
    role: caller.role,
    key_id: caller.credential.kind === "jwt" ? null : caller.credential.key_id,
    quotas: caller.credential.kind === "api_key" ? keyQuotas(caller.credential.key) : null,
    operator: false,
  };
}

export function nodeContext(caller: Caller): NodeContext {
  if (caller.credential.kind !== "node_key")
    throw new AppError("permission.denied", "This operation takes the node's own key.");
  return { app_id: caller.app_id, business_id: caller.business_id, node_id: caller.credential.node_id };
}

/** The context of a route open to users and nodes: a node acts as itself. */
export function actorContext(caller: Caller): UserContext | NodeContext {
  return caller.credential.kind === "node_key" ? nodeContext(caller) : userContext(caller);
}

/**
 * An RPC the gateway does not own: one NATS request to the owning service with the caller
 * and the validated body, its answer passed through.
 */
export function forward<R extends RpcRoute>(
  gw: GatewayContext,
  route: R,
  subject: string,
  context: (caller: Caller) => UserContext | NodeContext = userContext,
  timeoutMs?: number,
): RpcHandler<R> {
  return async (body, { caller, trace }) => {
    if (!caller) throw new AppError("auth.missing_credentials");
    return requestRpc(
      gw.nc,
      subject,
      { caller: context(caller), body },
      route.response as z.ZodType,
      timeoutMs === undefined ? { trace } : { timeoutMs, trace },
    ) as Promise<z.input<R["response"]>>;
  };
}
