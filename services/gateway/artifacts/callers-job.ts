import { JobPayload, type Job } from "../../../shared/contract/index.js";
import { requestRpc, subjects } from "../../../shared/nats/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RequestTrace } from "../../../shared/tracing/index.js";
import type { Caller } from "../identity/authenticator.js";
import { userContext } from "../rpc/forward.js";

/** A job of the caller's business, asked of the scheduler; another tenant's or a missing one is `resource.not_found`. */
export async function callersJob(
  gw: GatewayContext,
  caller: Caller,
  jobId: string,
  trace?: RequestTrace,
): Promise<Job> {
  const { job } = await requestRpc(
    gw.nc,
    subjects.jobRetrieve(),
    { caller: userContext(caller), body: { job_id: jobId } },
    JobPayload,
    { trace },
  );
  return job;
}
