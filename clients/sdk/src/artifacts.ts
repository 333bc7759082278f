import { httpAnswerFacts, readEnvelope } from "../../../shared/client/index.js";
import { artifactPath, type Artifact } from "../../../shared/contract/index.js";
import { IntegrityError } from "./errors.js";
import type { RequestBody, Transport } from "./transport.js";

/**
 * A Node stream (a file's `createReadStream`) as far as the SDK uses it: it has `pipe` (a web
 * stream does not) and yields its chunks. Described here, not imported from node:stream, so
 * the SDK's types compile without @types/node and the SDK loads in a browser.
 */
export interface NodeReadable extends AsyncIterable<Uint8Array> {
  pipe: (...args: never[]) => unknown;
}

/** What an artifact upload takes: bytes, a Blob, a web stream or a Node stream (a file's `createReadStream`). */
export type ArtifactBody = string | Uint8Array | Blob | ReadableStream<Uint8Array> | NodeReadable;

function isNodeStream(body: ArtifactBody): body is NodeReadable {
  return typeof (body as { pipe?: unknown }).pipe === "function";
}

/** `ReadableStream.from` (Node.js 20.6 and later), which the DOM library's types (the portal's build) do not list. */
interface WebStreamFrom {
  from(source: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array>;
}

function asRequestBody(body: ArtifactBody): RequestBody {
  if (isNodeStream(body)) return (ReadableStream as unknown as WebStreamFrom).from(body);
  return body as RequestBody;
}

/** Stores one artifact through its signed upload URL (`url` from presign-upload); answers the artifact as stored. */
export async function putArtifact(
  transport: Transport,
  url: string,
  body: ArtifactBody,
  contentType: string | undefined,
): Promise<Artifact> {
  const response = await transport.request("PUT", url, asRequestBody(body), {
    idempotent: true,
    identify: "none",
    headers: contentType !== undefined ? { "content-type": contentType } : {},
  });
  return readEnvelope(await response.json(), httpAnswerFacts(response)) as Artifact;
}

/** A download in progress: the bytes, and what the service recorded about them. */
export interface ArtifactDownload {
  /** The bytes; the stream errors with an IntegrityError at its end when they are not the recorded SHA-256. */
  body: ReadableStream<Uint8Array>;
  sha256: string;
  sizeBytes: number;
  contentType: string;
}

/**
 * Opens one artifact of a job (`artifactPath`, with the client's credential: a session, or
 * an API key with `jobs:read`); the bytes are checked against the `ETag` (the SHA-256) as they pass.
 */
export async function getArtifact(
  transport: Transport,
  jobId: string,
  artifactId: string,
  signal?: AbortSignal,
): Promise<ArtifactDownload> {
  const response = await transport.request("GET", artifactPath(jobId, artifactId), undefined, {
    idempotent: true,
    signal,
  });
  // Loaded here, not at the top: the SDK's other calls work in a browser, which has no node:crypto.
  const { createHash } = await import("node:crypto");
  const sha256 = (response.headers.get("etag") ?? "").replaceAll('"', "");
  const sizeBytes = Number(response.headers.get("content-length") ?? "NaN");
  const hash = createHash("sha256");
  let received = 0;
  const checked = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      hash.update(chunk);
      received += chunk.byteLength;
      controller.enqueue(chunk);
    },
    flush(controller) {
      const actual = hash.digest("hex");
      if (actual !== sha256)
        controller.error(
          new IntegrityError(
            `The artifact's bytes do not match its SHA-256 (${received} bytes received).`,
            sha256,
            actual,
          ),
        );
    },
  });
  return {
    body: response.body!.pipeThrough(checked),
    sha256,
    sizeBytes,
    contentType: response.headers.get("content-type") ?? "application/octet-stream",
  };
}

/** Reads a whole download into memory (small artifacts); throws IntegrityError when it does not check out. */
export async function readAll(download: ArtifactDownload): Promise<Uint8Array> {
  return new Uint8Array(await new Response(download.body).arrayBuffer());
}
