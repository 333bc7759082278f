import { finished, Readable, Transform } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { ContentType } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { sendSuccess } from "../http/envelope.js";
import { artifactParams, pathOf, type ArtifactRouteParams } from "./artifact-params.js";
import { quotaExceeded, type UploadRoom } from "./artifact-budget.js";
import type { ArtifactRef, UploadFacts } from "./artifact-store.js";
import { verifyArtifactUrl } from "./artifact-urls.js";

const DEFAULT_CONTENT_TYPE = "application/octet-stream";

export function tooLarge(limit: number): AppError {
  return new AppError("request.too_large", `An artifact may have at most ${limit} bytes.`, {
    details: { max_bytes: limit },
  });
}

/** How an upload's body went: refused for its size so far, or cut off by the client. */
interface BodyOutcome {
  refusal: AppError | undefined;
  cutOff: boolean;
}

/** The body, passed through as it arrives; once its size is refused (`sizeRefusal`) it fails with that error. */
function limitedBody(source: Readable, upload: AuthorizedUpload): { body: Transform; outcome: BodyOutcome } {
  const outcome: BodyOutcome = { refusal: undefined, cutOff: false };
  let received = 0;
  const body = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length;
      outcome.refusal = sizeRefusal(upload, received);
      if (!outcome.refusal) return done(null, chunk);
      done(outcome.refusal);
    },
  });
  // A client that goes away mid-body fails the upload instead of leaving it waiting.
  finished(source, (error) => {
    if (!error) return;
    outcome.cutOff = true;
    body.destroy(error);
  });
  source.pipe(body);
  return { body, outcome };
}

/** An upload's `Content-Type` that is not a media type: a malformed request (any media type is taken, so it is no 415). */
export function notAMediaType(message = "a media type such as `text/plain`"): AppError {
  return new AppError("request.invalid", "The Content-Type header is not a media type.", {
    details: { issues: [{ path: "Content-Type", message }] },
  });
}

function contentTypeOf(request: FastifyRequest): string | undefined {
  const header = request.headers["content-type"];
  if (header === undefined) return undefined;
  const parsed = ContentType.safeParse(header);
  if (!parsed.success) throw notAMediaType(parsed.error.issues[0]?.message);
  return parsed.data;
}

/** An upload whose signed URL checked out: what it stores, under which facts, up to which size. */
export interface AuthorizedUpload {
  ref: ArtifactRef;
  facts: UploadFacts;
  /** The largest artifact (`CJS_MAX_ARTIFACT_BYTES`). */
  limit: number;
  /** What its business's artifact budget leaves it; null without a budget. */
  room: UploadRoom | null;
}

/**
 * Why an upload of `bytes` (announced, or received so far) is refused for its size, if it
 * is: over the largest artifact (`request.too_large`), else over what its business's budget
 * leaves (`artifacts.quota_exceeded`). Both are 413, so the connection is closed after.
 */
export function sizeRefusal(upload: AuthorizedUpload, bytes: number): AppError | undefined {
  if (bytes > upload.limit) return tooLarge(upload.limit);
  if (upload.room !== null && bytes > upload.room.roomBytes) return quotaExceeded(upload.room);
  return undefined;
}

/** An upload as a transport received it, before any byte is read. */
export interface UploadRequest {
  /** The request path as sent (percent-encoded): what the signature covers. */
  path: string;
  query: Record<string, unknown>;
  params: ArtifactRouteParams;
  /** The size the client announced (`Content-Length`, `size_bytes`), if any. */
  declaredBytes: number | undefined;
  /** The media type the client sent, read only when the URL fixes none. */
  contentType: () => string | undefined;
}

/**
 * Checks an upload the same way whatever its transport (HTTP `PUT`, NATS): the bus is up,
 * the signed URL's signature and expiry hold, the tenancy it grants names the object, the
 * name is an artifact id, and the announced size is within the limit and within what the
 * business's artifact budget leaves. The budget is checked here, where every upload
 * passes, whoever signed its URL; uploads of one business at once may together pass it by
 * what they hold.
 */
export async function authorizeUpload(
  gw: GatewayContext,
  natsUp: () => boolean,
  request: UploadRequest,
): Promise<AuthorizedUpload> {
  if (!natsUp())
    throw new AppError("service.unavailable", "The service is reconnecting to its message bus; try again shortly.", {
      retryAfterSeconds: 1,
    });
  const grant = verifyArtifactUrl(gw.urls, "PUT", request.path, request.query);
  const { job_id, artifact_id } = artifactParams(request.params);
  const limit = gw.config.CJS_MAX_ARTIFACT_BYTES;
  const content_type = grant.content_type ?? request.contentType() ?? DEFAULT_CONTENT_TYPE;
  const ref = { app_id: grant.app_id, business_id: grant.business_id, job_id, artifact_id };
  const upload = {
    ref,
    facts: { content_type, attempt: grant.attempt },
    limit,
    room: await gw.artifactBudget.room(ref),
  };
  const refusal = sizeRefusal(upload, request.declaredBytes ?? 0);
  if (refusal) throw refusal;
  return upload;
}

/**
 * `PUT /api/compute/artifacts/upload/{jobId}/{id}`: the signed URL is the credential. The
 * body streams into the object store; size, SHA-256 and content type are recorded.
 */
export function uploadArtifact(gw: GatewayContext, natsUp: () => boolean) {
  return async (request: FastifyRequest<{ Params: ArtifactRouteParams }>, reply: FastifyReply) => {
    const upload = await authorizeUpload(gw, natsUp, {
      path: pathOf(request.url),
      query: request.query as Record<string, unknown>,
      params: request.params,
      declaredBytes: Number(request.headers["content-length"] ?? 0),
      contentType: () => contentTypeOf(request),
    });

    // Without a body (no length, not chunked) fastify runs no parser; the raw request is then empty.
    const source = (request.body as Readable | undefined) ?? request.raw;
    const { body, outcome } = limitedBody(source, upload);
    try {
      const artifact = await gw.artifacts.save(
        upload.ref,
        upload.facts,
        Readable.toWeb(body) as ReadableStream<Uint8Array>,
      );
      return sendSuccess(reply, "Artifact stored", artifact);
    } catch (error) {
      // Read and drop whatever is still coming, so the answer reaches the client.
      source.unpipe(body);
      source.resume();
      if (outcome.refusal) throw outcome.refusal;
      if (outcome.cutOff)
        throw new AppError("request.invalid", "The upload ended before its body was complete; nothing was stored.");
      throw error;
    }
  };
}
