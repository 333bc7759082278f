import { JobPayload, type Job, type UserContext } from "../../../shared/contract/index.js";
import { requestRpc, subjects } from "../../../shared/nats/index.js";
import type { RequestTrace } from "../../../shared/tracing/index.js";
import type { GatewayContext } from "../gateway-context.js";

/** The caller's job, read through the scheduler: another tenant's job is `resource.not_found`. */
export async function retrieveCallerJob(
  gw: GatewayContext,
  caller: UserContext,
  jobId: string,
  trace?: RequestTrace,
): Promise<Job> {
  const { job } = await requestRpc(gw.nc, subjects.jobRetrieve(), { caller, body: { job_id: jobId } }, JobPayload, {
    trace,
  });
  return job;
}
