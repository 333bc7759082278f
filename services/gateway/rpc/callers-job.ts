import type { Job, UserContext } from "../../../shared/contract/index.js";
import { requestRpc } from "../../../shared/nats/index.js";
import type { RequestTrace } from "../../../shared/tracing/index.js";
import type { GatewayContext } from "../gateway-context.js";

/** A job of the caller's business, asked of the scheduler; another tenant's or a missing one is `resource.not_found`. */
export async function callersJob(
  gw: GatewayContext,
  caller: UserContext,
  jobId: string,
  trace?: RequestTrace,
): Promise<Job> {
  const { job } = await requestRpc(gw.nc, "jobRetrieve", { caller, body: { job_id: jobId } }, { trace });
  return job;
}
