import { z } from "zod";
import { ContentType } from "./artifacts.js";
import type { RpcName } from "./routes.js";

/**
 * The NATS-direct node plane: what an agent on the internal network sends to the gateway
 * over NATS instead of HTTP. Each operation is the HTTP operation of the same route in
 * `RPC_ROUTES` (same request schema, same credential level, same handler): the message
 * body is the request's JSON, headers `X-App-ID` and `X-API-Key` (or `Authorization`)
 * carry what the HTTP headers carry, and the reply is the same envelope as the HTTP body.
 * A retryable failure's reply carries a `Retry-After` header, as HTTP does.
 */
export const NODE_NATS_OPERATIONS = {
  register: "registerNode",
  heartbeat: "heartbeat",
  poll: "poll",
  result: "result",
  logs: "pushLogs",
  drain: "drainNode",
} as const satisfies Record<string, RpcName>;
export type NodeNatsOperation = keyof typeof NODE_NATS_OPERATIONS;

/** Headers of a NATS node-plane message, named as in HTTP. */
export const NODE_NATS_HEADERS = {
  appId: "X-App-ID",
  apiKey: "X-API-Key",
  authorization: "Authorization",
  retryAfter: "Retry-After",
  /** Optional, as in HTTP: the agent's id for the message (else the gateway makes one) and its W3C trace context. */
  requestId: "X-Request-ID",
  traceparent: "traceparent",
  tracestate: "tracestate",
  /** On an upload chunk: its number, from 1. */
  chunkSeq: "Cjs-Chunk-Seq",
} as const;

/** The largest chunk of an artifact upload over NATS, in bytes. */
export const NATS_UPLOAD_CHUNK_MAX_BYTES = 256 * 1024;

/**
 * Opens an artifact upload over NATS. `url` is the signed upload URL of the assignment
 * (with the artifact's name in place of `{artifact_id}`): it is the upload's only
 * credential, checked exactly as the HTTP `PUT` checks it.
 */
export const NatsUploadOpenRequest = z.strictObject({
  url: z.string().min(1).max(8192),
  /** The whole file's size; above the gateway's limit the upload is refused at once (`request.too_large`). */
  size_bytes: z.number().int().min(0),
  /** The artifact's media type, unless the URL fixes one (as `Content-Type` does over HTTP). */
  content_type: ContentType.optional(),
});
export type NatsUploadOpenRequest = z.infer<typeof NatsUploadOpenRequest>;

/**
 * Where the rest of the upload goes: `<subject>.chunk` (the bytes, at most `chunk_bytes`
 * each, numbered by the `Cjs-Chunk-Seq` header from 1, one at a time: each is answered
 * once the store has taken it), then `<subject>.commit`, or `<subject>.abort`. The subject
 * lives on the gateway replica that opened it; when it no longer answers, start again.
 */
export const NatsUploadOpenResponse = z.object({
  subject: z.string(),
  chunk_bytes: z.number().int().min(1),
  /** An upload idle this long is aborted and leaves nothing behind. */
  idle_timeout_seconds: z.number().int().min(1),
});
export type NatsUploadOpenResponse = z.infer<typeof NatsUploadOpenResponse>;

/** The answer to a chunk: how many bytes the upload holds so far. */
export const NatsUploadChunkResponse = z.object({ received_bytes: z.number().int().min(0) });
export type NatsUploadChunkResponse = z.infer<typeof NatsUploadChunkResponse>;

/** Ends the upload: stored only if the bytes received are exactly this many, with this SHA-256. */
export const NatsUploadCommitRequest = z.strictObject({
  size_bytes: z.number().int().min(0),
  /** Lowercase hex. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type NatsUploadCommitRequest = z.infer<typeof NatsUploadCommitRequest>;
