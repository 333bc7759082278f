import type { RPC_ROUTES } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { callersJob } from "../rpc/callers-job.js";
import { userContext } from "../rpc/forward.js";

/**
 * `POST /api/compute/jobs/artifacts/delete`: removes one artifact of a job of the caller's
 * business, in any state of the job (any user of the business may, as with cancel).
 * Deleting it again, or a name the job never had, is `resource.not_found`.
 */
export function deleteArtifact(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.deleteArtifact> {
  return async (body, { caller, trace }) => {
    const job = await callersJob(gw, userContext(caller), body.job_id, trace);
    const ref = { app_id: job.app_id, business_id: job.business_id, job_id: job.job_id, artifact_id: body.artifact_id };
    if (!(await gw.artifacts.remove(ref)))
      throw new AppError("resource.not_found", `Job ${job.job_id} has no artifact ${body.artifact_id}.`);
    return { job_id: job.job_id, artifact_id: body.artifact_id };
  };
}
