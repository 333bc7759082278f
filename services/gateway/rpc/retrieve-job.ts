import { type RPC_ROUTES } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { callersJob } from "./callers-job.js";
import { userContext } from "./forward.js";

/** `POST /api/compute/jobs/retrieve`: the job from the scheduler, with its artifacts from the gateway's index. */
export function retrieveJob(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.retrieveJob> {
  return async (body, { caller, trace }) => {
    const job = await callersJob(gw, userContext(caller), body.job_id, trace);
    const artifacts = await gw.artifacts.list({ app_id: job.app_id, business_id: job.business_id, job_id: job.job_id });
    return { job, artifacts };
  };
}
