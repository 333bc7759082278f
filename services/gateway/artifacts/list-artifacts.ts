import type { RPC_ROUTES } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { callersJob } from "../rpc/callers-job.js";
import { userContext } from "../rpc/forward.js";

/** `POST /api/compute/jobs/artifacts/list`: the artifacts of a job of the caller's business, as retrieve shows them. */
export function listArtifacts(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.listArtifacts> {
  return async (body, { caller, trace }) => {
    const job = await callersJob(gw, userContext(caller), body.job_id, trace);
    const artifacts = await gw.artifacts.list({ app_id: job.app_id, business_id: job.business_id, job_id: job.job_id });
    return { job_id: job.job_id, artifacts };
  };
}
