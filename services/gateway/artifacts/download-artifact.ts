import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { artifactParams, pathOf, type ArtifactRouteParams } from "./artifact-params.js";
import { verifyArtifactUrl } from "./artifact-urls.js";
import { parseByteRange } from "./byte-range.js";

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

    const { artifact } = stored;
    const size = artifact.size_bytes;
    const etag = `"${artifact.sha256}"`;
    // `If-Range` with another version's tag asks for the whole new version.
    const ifRange = request.headers["if-range"];
    const range = ifRange === undefined || ifRange === etag ? parseByteRange(request.headers.range, size) : null;
    if (range === "unsatisfiable") {
      reply.header("content-range", `bytes */${size}`);
      throw new AppError("request.range_not_satisfiable", `The artifact has ${size} bytes.`, {
        details: { size_bytes: size },
      });
    }

    reply
      .header("content-type", artifact.content_type)
      .header("etag", etag)
      .header("accept-ranges", "bytes")
      .header("content-disposition", `attachment; filename="${artifact_id}"`)
      .header("x-content-type-options", "nosniff")
      .header("cache-control", "private, max-age=0");
    if (range) {
      reply
        .code(206)
        .header("content-range", `bytes ${range.start}-${range.end}/${size}`)
        .header("content-length", String(range.end - range.start + 1));
    } else {
      reply.header("content-length", String(size));
    }
    if (request.method === "HEAD") return reply.send();
    return reply.send(gw.artifacts.read(stored, range ?? undefined));
  };
}
