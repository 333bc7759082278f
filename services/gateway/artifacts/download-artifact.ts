import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { artifactParams, pathOf, type ArtifactRouteParams } from "./artifact-params.js";
import { verifyArtifactUrl } from "./artifact-urls.js";
import { sendArtifact } from "./send-artifact.js";

/**
 * `GET` (and `HEAD`) `/api/compute/artifacts/download/{jobId}/{id}`: the signed URL is the
 * credential. Streams the artifact from the object store; a single `Range` gets a 206.
 */
export function downloadArtifact(gw: GatewayContext, natsUp: () => boolean) {
  return async (request: FastifyRequest<{ Params: ArtifactRouteParams }>, reply: FastifyReply) => {
    if (!natsUp())
      throw new AppError("service.unavailable", "The service is reconnecting to its message bus; try again shortly.", {
        retryAfterSeconds: 1,
      });
    const grant = verifyArtifactUrl(gw.urls, "GET", pathOf(request.url), request.query as Record<string, unknown>);
    const { job_id, artifact_id } = artifactParams(request.params);
    const stored = await gw.artifacts.find({
      app_id: grant.app_id,
      business_id: grant.business_id,
      job_id,
      artifact_id,
    });
    if (!stored) throw new AppError("resource.not_found", `Job ${job_id} has no artifact ${artifact_id}.`);
    return sendArtifact(gw, request, reply, stored);
  };
}
