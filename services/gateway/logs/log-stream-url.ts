import { isId, logStreamPath, type RPC_ROUTES, type UserContext } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { userContext } from "../rpc/forward.js";
import { callersJob } from "../rpc/callers-job.js";

/** Who a signed stream URL reads as: `<app_id>.<business_id>.<user_id>` (none of them contains a dot). */
export interface StreamCaller {
  app_id: string;
  business_id: string;
  user_id: string;
}

/**
 * What a stream URL's signature covers: method GET, the job's path and the caller, so a
 * URL neither opens another job's stream nor reads as another tenant.
 */
export function logStreamScope(jobId: string, callerParam: string): string {
  return `${logStreamPath(jobId)}?caller=${callerParam}`;
}

/** The `caller` parameter of a signed URL, checked after its signature. */
export function parseStreamCaller(value: string): StreamCaller {
  const [app_id, business_id, user_id, ...rest] = value.split(".");
  if (rest.length > 0 || !isId("app", app_id) || !isId("business", business_id) || !isId("user", user_id)) {
    throw new AppError("url.signature_invalid", "This URL is not a valid signed URL.");
  }
  return { app_id, business_id, user_id };
}

/**
 * `POST /api/compute/jobs/logs/stream-url`: a short-lived URL of the job's log stream
 * that needs no headers (for a browser's EventSource). The job must be the caller's.
 */
export function logStreamUrl(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.logStreamUrl> {
  return async ({ job_id }, { caller, trace }) => {
    const context: UserContext = userContext(caller);
    await callersJob(gw, context, job_id, trace);
    const callerParam = `${context.app_id}.${context.business_id}.${context.user_id}`;
    const expiresAtMs = gw.clock.now() + gw.config.CJS_LOG_STREAM_URL_TTL_SECONDS * 1000;
    const signature = gw.urls.sign({ method: "GET", path: logStreamScope(job_id, callerParam), expiresAtMs });
    return {
      url: `${logStreamScope(job_id, callerParam)}&${signature}`,
      // The signature carries whole seconds.
      expires_at: new Date(Math.floor(expiresAtMs / 1000) * 1000).toISOString(),
    };
  };
}
