import { createHash } from "node:crypto";
import { connect, headers as natsHeaders, Match, type MsgHdrs, type NatsConnection } from "@nats-io/transport-node";
import type { z } from "zod";
import { ApiError, readEnvelope } from "../../shared/client/index.js";
import {
  Artifact,
  NatsUploadChunkResponse,
  NatsUploadOpenResponse,
  NODE_NATS_HEADERS,
  NODE_NATS_OPERATIONS,
  type NodeNatsOperation,
  RPC_ROUTES,
  type RpcResponse,
} from "../../shared/contract/index.js";
import { decodeJson, encodeJson, natsAuthOptions, type NatsCredentials, subjects } from "../../shared/nats/index.js";
import {
  type ArtifactFile,
  CALL_TIMEOUT_MS,
  type NodePlane,
  openRegularFile,
  POLL_MARGIN_MS,
  uploadUrlOf,
} from "./node-plane.js";

/** The agent's NATS connection, made on first use and closed when the agent stops. */
export interface NatsLink {
  /**
   * The connection while it is up, with a signal aborted when it drops: a request in
   * flight then fails at once, as an HTTP call does on a reset, instead of waiting out its
   * timeout. While the connection is down this throws, so the caller backs off.
   */
  connection(): Promise<{ nc: NatsConnection; lost: AbortSignal }>;
  close(): Promise<void>;
}

export interface NatsLinkOptions {
  /** One URL or a comma-separated list of servers. */
  url: string;
  credentials: NatsCredentials;
  /** Where replies come back: the agent's NATS user may subscribe to `<prefix>.>` only. */
  inboxPrefix: string;
  name: string;
}

/**
 * Connects on first use and then rides out server restarts (the client reconnects for
 * ever). A first connect that fails throws: the caller's back-off tries again, so an agent
 * started before NATS stays stoppable.
 */
export function natsLink(options: NatsLinkOptions): NatsLink {
  let current: Promise<NatsConnection> | undefined;
  let closed = false;
  let up = false;
  let lost = new AbortController();

  function watch(nc: NatsConnection): void {
    up = true;
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === "disconnect") {
          up = false;
          lost.abort(new Error("the connection to NATS was lost"));
          lost = new AbortController();
        } else if (status.type === "reconnect") {
          up = true;
        }
      }
    })();
  }

  async function connection(): Promise<NatsConnection> {
    if (current) {
      const nc = await current.catch(() => undefined);
      if (nc && !nc.isClosed()) return nc;
    }
    const attempt = connect({
      ...natsAuthOptions(options.credentials),
      servers: options.url.split(",").map((server) => server.trim()),
      name: options.name,
      inboxPrefix: options.inboxPrefix,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      pingInterval: 10_000,
      // Otherwise every request captures a stack trace up front.
      noAsyncTraces: true,
    });
    current = attempt;
    watch(await attempt);
    return attempt;
  }

  return {
    async connection() {
      if (closed) throw new Error("the NATS connection was closed");
      const nc = await connection();
      if (!up) throw new Error("not connected to NATS; reconnecting");
      return { nc, lost: lost.signal };
    },
    async close() {
      closed = true;
      const nc = await current?.catch(() => undefined);
      await nc?.close().catch(() => undefined);
    },
  };
}

/**
 * Ends the wait for `promise` when any of `signals` aborts (the request itself then times
 * out unseen). It listens to each signal itself: on Node 20 a signal made by
 * `AbortSignal.any` may stop firing once garbage collection has run.
 */
function abortable<T>(promise: Promise<T>, ...signals: (AbortSignal | undefined)[]): Promise<T> {
  const present = signals.filter((signal) => signal !== undefined);
  if (present.length === 0) return promise;
  for (const signal of present) signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const listeners = present.map((signal) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      return () => signal.removeEventListener("abort", onAbort);
    });
    promise.then(resolve, reject).finally(() => listeners.forEach((remove) => remove()));
  });
}

export interface NatsNodePlaneOptions {
  link: NatsLink;
  appId: string;
  nodeKey?: string;
}

interface NatsRequestOptions {
  timeoutMs?: number;
  headers?: MsgHdrs;
  signal?: AbortSignal | undefined;
}

/** One request over the link, its answer read as an envelope and its payload checked against `schema`. */
async function natsRequest<S extends z.ZodType>(
  link: NatsLink,
  subject: string,
  body: Uint8Array,
  schema: S,
  { timeoutMs = CALL_TIMEOUT_MS, headers, signal }: NatsRequestOptions = {},
): Promise<z.infer<S>> {
  signal?.throwIfAborted();
  const { nc, lost } = await abortable(link.connection(), signal);
  const maxPayload = nc.info?.max_payload;
  if (maxPayload !== undefined && body.length > maxPayload) {
    throw new ApiError({
      code: "request.too_large",
      message: `The message is larger than the NATS server accepts (${maxPayload} bytes).`,
      status: 413,
    });
  }
  const sent = nc.request(subject, body, { timeout: timeoutMs, ...(headers ? { headers } : {}) });
  const reply = await abortable(sent, signal, lost);
  let decoded: unknown;
  try {
    decoded = reply.data.length === 0 ? undefined : decodeJson(reply.data);
  } catch {
    decoded = undefined;
  }
  const payload = readEnvelope(decoded, {
    retryAfter: reply.headers?.get(NODE_NATS_HEADERS.retryAfter, Match.IgnoreCase),
  });
  return schema.parse(payload);
}

/**
 * Opens the upload with the signed URL, streams the file in chunks (each sent once the
 * previous one is stored), then commits its size and SHA-256. Any failure aborts it;
 * a retry starts again from the first byte.
 */
async function uploadOverNats(
  link: NatsLink,
  urlTemplate: string,
  file: ArtifactFile,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { handle, size } = await openRegularFile(file);
  let subject: string | undefined;
  try {
    const opened = await natsRequest(
      link,
      subjects.nodePlaneUploadOpen(),
      encodeJson({ url: uploadUrlOf(urlTemplate, file.name), size_bytes: size, content_type: file.contentType }),
      NatsUploadOpenResponse,
      { signal },
    );
    subject = opened.subject;
    const buffer = Buffer.alloc(opened.chunk_bytes);
    const hash = createHash("sha256");
    let sent = 0;
    for (let seq = 1; ; seq += 1) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      hash.update(chunk);
      const headers = natsHeaders();
      headers.set(NODE_NATS_HEADERS.chunkSeq, String(seq));
      await natsRequest(link, `${subject}.chunk`, chunk, NatsUploadChunkResponse, { headers, signal });
      sent += bytesRead;
    }
    const commit = encodeJson({ size_bytes: sent, sha256: hash.digest("hex") });
    await natsRequest(link, `${subject}.commit`, commit, Artifact, { signal });
    subject = undefined;
  } catch (error) {
    // Tell the gateway at once rather than letting the upload idle out; it may already be gone.
    const abandoned = subject;
    if (abandoned !== undefined)
      void link
        .connection()
        .then(
          ({ nc }) => nc.publish(`${abandoned}.abort`),
          () => undefined,
        )
        .catch(() => undefined);
    throw error;
  } finally {
    await handle.close();
  }
}

/**
 * The node plane over NATS (NATS-direct mode): the same operations, credentials and
 * envelopes as HTTP, as request/reply on `cjs.nodeplane.*`. No responders, a timeout or a
 * lost connection throw a plain error, which the agent retries like a 503.
 */
export function natsNodePlane(options: NatsNodePlaneOptions): NodePlane {
  const { link, appId } = options;

  async function call<O extends NodeNatsOperation>(
    operation: O,
    body: unknown,
    apiKey: string | undefined,
    signal: AbortSignal | undefined,
    timeoutMs = CALL_TIMEOUT_MS,
  ): Promise<RpcResponse<(typeof NODE_NATS_OPERATIONS)[O]>> {
    if (apiKey === undefined) throw new Error("the node is not registered yet");
    const headers = natsHeaders();
    headers.set(NODE_NATS_HEADERS.appId, appId);
    headers.set(NODE_NATS_HEADERS.apiKey, apiKey);
    const route = RPC_ROUTES[NODE_NATS_OPERATIONS[operation]];
    return natsRequest(link, subjects.nodePlane(operation), encodeJson(body), route.response, {
      timeoutMs,
      headers,
      signal,
    }) as Promise<RpcResponse<(typeof NODE_NATS_OPERATIONS)[O]>>;
  }

  return {
    register: (body, userApiKey, signal) => call("register", body, userApiKey, signal),
    withNodeKey: (nodeKey) => natsNodePlane({ ...options, nodeKey }),
    heartbeat: (body, signal) => call("heartbeat", body, options.nodeKey, signal),
    poll: (body, signal) =>
      call("poll", body, options.nodeKey, signal, (body.wait_seconds ?? 0) * 1000 + POLL_MARGIN_MS),
    result: (body, signal) => call("result", body, options.nodeKey, signal),
    pushLogs: (body, signal) => call("logs", body, options.nodeKey, signal),
    drain: (body, signal) => call("drain", body, options.nodeKey, signal),
    upload: (urlTemplate, file, signal) => uploadOverNats(link, urlTemplate, file, signal),
  };
}
