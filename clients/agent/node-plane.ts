import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { Readable } from "node:stream";
import { ComputeClient, httpAnswerFacts, readEnvelope } from "../../shared/client/index.js";
import type { Assignment, RpcName, RpcRequest, RpcResponse } from "../../shared/contract/index.js";
import { withDeadline } from "./call-deadline.js";

/**
 * An assignment as the agent reads it. `artifact_upload_url` (a URL with the literal
 * text `{artifact_id}` to replace by the file name) comes from gateways that store
 * artifacts; without it the agent uploads nothing.
 */
export type AgentAssignment = Assignment & { artifact_upload_url?: string | null | undefined };

/** One file to upload: its name in the job (the artifact id), where it is on disk, and its media type. */
export interface ArtifactFile {
  name: string;
  path: string;
  contentType: string;
}

/**
 * Everything the agent says to the service, over HTTP (`httpNodePlane`) or NATS
 * (`natsNodePlane`, for agents on the internal network): the same operations and answers.
 * Failures throw the ApiError the answer carries (`readEnvelope`), or a plain error when no
 * answer came back (connection refused, timeout).
 */
export interface NodePlane {
  /** First contact, with a user's API key; every other call uses the node key. */
  register(
    request: RpcRequest<"registerNode">,
    userApiKey: string,
    signal?: AbortSignal,
  ): Promise<RpcResponse<"registerNode">>;
  /** The same transport acting as a registered node. */
  withNodeKey(nodeKey: string): NodePlane;
  heartbeat(request: RpcRequest<"heartbeat">, signal?: AbortSignal): Promise<RpcResponse<"heartbeat">>;
  /** Long-polls; aborting `signal` ends a wait in flight (as it ends any call in flight). */
  poll(
    request: RpcRequest<"poll">,
    signal?: AbortSignal,
  ): Promise<{ jobs: AgentAssignment[]; held?: RpcResponse<"poll">["held"] }>;
  result(request: RpcRequest<"result">, signal?: AbortSignal): Promise<RpcResponse<"result">>;
  pushLogs(request: RpcRequest<"pushLogs">, signal?: AbortSignal): Promise<RpcResponse<"pushLogs">>;
  drain(request: RpcRequest<"drainNode">, signal?: AbortSignal): Promise<RpcResponse<"drainNode">>;
  /** PUTs a file's bytes to an assignment's upload URL. */
  upload(urlTemplate: string, file: ArtifactFile, signal?: AbortSignal): Promise<void>;
}

/** A call that has not answered by then is treated as a lost connection and tried again. */
export const CALL_TIMEOUT_MS = 30_000;
/** A long poll waits up to `wait_seconds` on the gateway; this much more covers the trip. */
export const POLL_MARGIN_MS = 10_000;

/** An assignment's upload URL for one file: the literal `{artifact_id}` replaced by the URL-encoded name. */
export function uploadUrlOf(urlTemplate: string, name: string): string {
  return urlTemplate.replace(/\{artifact_id\}|%7Bartifact_id%7D/i, encodeURIComponent(name));
}

export interface HttpNodePlaneOptions {
  gatewayUrl: string;
  appId: string;
  fetch?: typeof fetch;
  nodeKey?: string;
  /** How long a call other than a long poll may take; CALL_TIMEOUT_MS unless a test sets it. */
  callTimeoutMs?: number;
}

/** The node plane over the gateway's HTTP API, through the typed ComputeClient. */
export function httpNodePlane(options: HttpNodePlaneOptions): NodePlane {
  const baseFetch = options.fetch ?? fetch;

  const callTimeoutMs = options.callTimeoutMs ?? CALL_TIMEOUT_MS;

  /** One call, its answer read in full, ended by its deadline or by `signal`. */
  const send = <N extends RpcName>(
    name: N,
    request: RpcRequest<N>,
    apiKey: string | undefined,
    timeoutMs: number,
    signal?: AbortSignal,
  ) => {
    if (apiKey === undefined) throw new Error("the node is not registered yet");
    return withDeadline(timeoutMs, signal, (limit) => {
      const limited: typeof fetch = (input, init) => baseFetch(input, { ...init, signal: limit });
      return new ComputeClient({ baseUrl: options.gatewayUrl, appId: options.appId, apiKey, fetch: limited }).call(
        name,
        request,
      );
    });
  };

  return {
    register: (request, userApiKey, signal) => send("registerNode", request, userApiKey, callTimeoutMs, signal),
    withNodeKey: (nodeKey) => httpNodePlane({ ...options, nodeKey }),
    heartbeat: (request, signal) => send("heartbeat", request, options.nodeKey, callTimeoutMs, signal),
    poll: (request, signal) =>
      send("poll", request, options.nodeKey, (request.wait_seconds ?? 0) * 1000 + POLL_MARGIN_MS, signal),
    result: (request, signal) => send("result", request, options.nodeKey, callTimeoutMs, signal),
    pushLogs: (request, signal) => send("pushLogs", request, options.nodeKey, callTimeoutMs, signal),
    drain: (request, signal) => send("drainNode", request, options.nodeKey, callTimeoutMs, signal),

    async upload(urlTemplate, file, signal) {
      const url = uploadUrlOf(urlTemplate, file.name);
      const { handle, size } = await openRegularFile(file);
      try {
        // The URL is its own credential: no key goes with it.
        const response = await baseFetch(url, {
          method: "PUT",
          headers: { "content-type": file.contentType, "content-length": String(size) },
          body: Readable.toWeb(handle.createReadStream({ autoClose: false })) as ReadableStream<Uint8Array>,
          duplex: "half",
          ...(signal ? { signal } : {}),
        });
        const body = jsonOrNothing(await response.text());
        // A store that answers the PUT with no envelope at all (an empty 200) has stored the file.
        if (response.ok && body === undefined) return;
        readEnvelope(body, httpAnswerFacts(response));
      } finally {
        await handle.close();
      }
    },
  };
}

/**
 * Opens an artifact's file to read, refusing anything but a regular file. O_NOFOLLOW: a job
 * may not swap a file for a link to the agent's own secrets. The caller closes the handle.
 */
export async function openRegularFile(file: ArtifactFile): Promise<{ handle: FileHandle; size: number }> {
  const handle = await open(file.path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new Error(`${file.name} is not a regular file`);
    return { handle, size: stat.size };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The JSON of an answer's text; undefined when it is empty or no JSON. */
function jsonOrNothing(text: string): unknown {
  try {
    return text === "" ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
