import type { RPC_ROUTES } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { signArtifactUrl, signedExpiry } from "./artifact-urls.js";
import { callersJob } from "../rpc/callers-job.js";
import { userContext } from "../rpc/forward.js";

/** `POST /api/compute/jobs/artifacts/presign-upload`: a URL to PUT one artifact of the caller's job to. */
export function presignUpload(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.presignUpload> {
  return async (body, { caller, origin, trace }) => {
    const job = await callersJob(gw, userContext(caller), body.job_id, trace);
    const expiresAtMs = gw.clock.now() + gw.config.CJS_ARTIFACT_URL_TTL_SECONDS * 1000;
    const grant = {
      app_id: job.app_id,
      business_id: job.business_id,
      attempt: null,
      content_type: body.content_type ?? null,
    };
    const url = signArtifactUrl(gw.urls, origin, {
      kind: "upload",
      job_id: job.job_id,
      artifact_id: body.artifact_id,
      grant,
      expiresAtMs,
    });
    return { url, method: "PUT", expires_at: signedExpiry(expiresAtMs) };
  };
}
