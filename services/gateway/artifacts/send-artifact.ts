import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { StoredArtifact } from "./artifact-store.js";
import { parseByteRange } from "./byte-range.js";

/**
 * Answers with a stored artifact: its bytes streamed from the object store, its SHA-256 as
 * the `ETag`, and a single `Range` (honoured unless `If-Range` names another version) as a 206.
 */
export function sendArtifact(
  gw: GatewayContext,
  request: FastifyRequest,
  reply: FastifyReply,
  stored: StoredArtifact,
): FastifyReply {
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
    .header("content-disposition", `attachment; filename="${artifact.artifact_id}"`)
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
}
