import { PollReply, type PollResponse, type RPC_ROUTES } from "../../../shared/contract/index.js";
import { requestRpc, subjects } from "../../../shared/nats/index.js";
import { signArtifactUrl } from "../artifacts/artifact-urls.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { nodeContext } from "./forward.js";

/**
 * Each attempt with the URL its artifacts go to: signed for every name of the job, in the
 * job's tenancy (not the node's: an operator pool serves many), until the job's timeout
 * plus the URL lifetime from now.
 */
function withUploadUrls(gw: GatewayContext, origin: string, reply: PollReply): PollResponse {
  const now = gw.clock.now();
  return {
    jobs: reply.jobs.map(({ app_id, business_id, ...assignment }) => ({
      ...assignment,
      artifact_upload_url: signArtifactUrl(gw.urls, origin, {
        kind: "upload",
        job_id: assignment.job_id,
        artifact_id: null,
        grant: { app_id, business_id, attempt: assignment.attempt, content_type: null },
        expiresAtMs: now + (assignment.timeout_seconds + gw.config.CJS_ARTIFACT_URL_TTL_SECONDS) * 1000,
      }),
    })),
  };
}

/**
 * `POST /api/compute/nodes/poll`: asks the scheduler; with nothing assigned and a
 * `wait_seconds`, waits for the node's assignment event and asks again, so a new job
 * reaches an idle node at once without the node polling in a loop. When `stopping`
 * aborts (the gateway is shutting down), a wait in progress ends at once with the empty
 * answer, so the node asks again, through another replica, instead of holding the stop up.
 */
export function pollNode(gw: GatewayContext, stopping?: AbortSignal): RpcHandler<typeof RPC_ROUTES.poll> {
  return async (body, { caller, origin, trace }) => {
    const node = nodeContext(caller);
    const ask = async (): Promise<PollResponse> =>
      withUploadUrls(
        gw,
        origin,
        await requestRpc(gw.nc, subjects.nodePoll(), { caller: node, body }, PollReply, { trace }),
      );
    if (body.wait_seconds === 0) return ask();
    // Subscribe before the first ask: an assignment between the two is not missed.
    const assigned = gw.nc.subscribe(subjects.nodeAssigned(node.node_id), { max: 1 });
    try {
      const first = await ask();
      if (first.jobs.length > 0) return first;
      const woken = (async () => {
        for await (const _event of assigned) return true;
        return false;
      })();
      const endWait = () => assigned.unsubscribe();
      const timer = setTimeout(endWait, body.wait_seconds * 1000);
      stopping?.addEventListener("abort", endWait, { once: true });
      if (stopping?.aborted) endWait();
      try {
        if (!(await woken)) return first;
      } finally {
        clearTimeout(timer);
        stopping?.removeEventListener("abort", endWait);
      }
      return await ask();
    } finally {
      assigned.unsubscribe();
    }
  };
}
