import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { ARTIFACT_DOWNLOAD_SCOPE, ARTIFACT_ROUTE } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { type Edge, httpCall, type RpcHandler, runRpc } from "../http/register-rpc.js";
import { artifactParams, type ArtifactRouteParams } from "./artifact-params.js";
import type { StoredArtifact } from "./artifact-store.js";
import { callersJob } from "../rpc/callers-job.js";
import { userContext } from "../rpc/forward.js";
import { sendArtifact } from "./send-artifact.js";

/** The download as `runRpc` checks it: a user's credential (a key needs `jobs:read`), the rate limit; no body. */
const ROUTE = {
  method: "POST",
  path: ARTIFACT_ROUTE,
  auth: "user",
  scope: ARTIFACT_DOWNLOAD_SCOPE,
  request: z.object({}),
  response: z.custom<StoredArtifact>(),
  message: "",
  summary: "One artifact of the caller's job, its bytes at once.",
} as const;

/**
 * `GET /api/compute/jobs/{jobId}/artifacts/{id}`: one artifact of a job of the caller's
 * business, with `X-App-ID` and a credential, for scripts and CI runners that hold an API
 * key (presign-download takes a JWT only). It passes the same checks as every RPC; another
 * business's or app's job, or an artifact it does not have, is `resource.not_found`.
 */
export function getArtifact(gw: GatewayContext, edge: Edge) {
  return async (request: FastifyRequest<{ Params: ArtifactRouteParams }>, reply: FastifyReply) => {
    const handler: RpcHandler<typeof ROUTE> = async (_body, { caller, trace }) => {
      const { job_id, artifact_id } = artifactParams(request.params);
      const job = await callersJob(gw, userContext(caller), job_id, trace);
      const ref = { app_id: job.app_id, business_id: job.business_id, job_id, artifact_id };
      const stored = await gw.artifacts.find(ref);
      if (!stored) throw new AppError("resource.not_found", `Job ${job_id} has no artifact ${artifact_id}.`);
      return stored;
    };
    const stored = await runRpc(edge, ROUTE, handler, { ...httpCall(request, reply), body: undefined });
    return sendArtifact(gw, request, reply, stored);
  };
}
