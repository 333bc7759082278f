import { headers, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { z } from "zod";
import { AppError, type ErrorData, errorSpec, isAppError, isErrorCode } from "../errors/index.js";
import { natsRequestSeconds, rpcServedSeconds, zodIssues } from "../runtime/index.js";
import {
  acceptedRequestId,
  acceptedTraceparent,
  acceptedTracestate,
  natsSpanAttributes,
  type RequestTrace,
  SPAN_KIND,
  startSpan,
  TRACE_HEADERS,
  traceLogFields,
  tracingOn,
  type TraceSpan,
} from "../tracing/index.js";
import {
  INTERNAL_RPCS,
  type InternalCommand,
  type InternalReply,
  type InternalRpcName,
  type AddressedRpc,
  type ReceivedCommand,
  rpcSubject,
  rpcSubjectLabel,
} from "./internal-rpcs.js";
import { asServiceError } from "./unavailable.js";

/** What a service replies over NATS: the payload, or the error as data. */
type RpcReply = { ok: true; payload: unknown } | { ok: false; error: ErrorData };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

export function decodeJson(data: Uint8Array): unknown {
  return JSON.parse(decoder.decode(data));
}

/** What `serveRpc` gives a handler besides its validated request. */
export interface ServedRequest {
  /**
   * The service's logger, bound to the request's `request_id` and `trace_id` when the
   * caller sent them: every line a handler writes about the request goes through it.
   */
  readonly log: Logger;
  /** To pass on to the requests the handler makes (`requestRpc`'s `trace`); undefined when the caller sent no request id or trace context. */
  readonly trace: RequestTrace | undefined;
}

/**
 * An RPC asked on an addressed subject names its address: the replica that alone answers
 * it (its instance id), or the job partition whose owner answers it. Any other names none.
 */
export type RpcAddress<N extends InternalRpcName> = N extends AddressedRpc ? { address: string } : { address?: never };

export type ServeRpcOptions<N extends InternalRpcName> = RpcAddress<N> & {
  /** Queue group, so that one replica takes each request. */
  queue: string;
  logger: Logger;
  /** Answers the checked command; what it answers is checked against the RPC's reply schema by the caller. */
  handle: (command: ReceivedCommand<N>, served: ServedRequest) => Promise<unknown>;
};

/** The request's trace as its message headers carry it; undefined when they carry neither a request id nor a trace context. */
function receivedTrace(msgHeaders: MsgHdrs | undefined): RequestTrace | undefined {
  if (msgHeaders === undefined) return undefined;
  const requestId = acceptedRequestId(msgHeaders.get(TRACE_HEADERS.requestId));
  const traceparent = acceptedTraceparent(msgHeaders.get(TRACE_HEADERS.traceparent));
  if (requestId === undefined && traceparent === undefined) return undefined;
  const tracestate =
    traceparent === undefined ? undefined : acceptedTracestate(msgHeaders.get(TRACE_HEADERS.tracestate) || undefined);
  return { requestId, traceparent, tracestate };
}

/** The handler's view of one request: the trace it passes on (from its own span when tracing is on) and a logger made on first use. */
function servedRequest(logger: Logger, received: RequestTrace | undefined, span: TraceSpan | undefined): ServedRequest {
  const trace = span
    ? { requestId: received?.requestId, traceparent: span.traceparent, tracestate: span.tracestate }
    : received;
  if (trace === undefined) return { log: logger, trace };
  let log: Logger | undefined;
  return {
    trace,
    get log() {
      log ??= logger.child(traceLogFields(trace));
      return log;
    },
  };
}

/**
 * Serves one internal RPC (`INTERNAL_RPCS`) on its subject: validates the command, runs the
 * handler, replies with data or an error. The caller's request id and trace context come
 * from the message headers (see `requestRpc`); with tracing on, each request handled is a
 * server span.
 */
export function serveRpc<N extends InternalRpcName>(
  nc: NatsConnection,
  name: N,
  options: ServeRpcOptions<N>,
): Subscription {
  const { queue, logger, handle } = options;
  const subject = rpcSubject(name, options.address);
  const label = rpcSubjectLabel(name, options.address);
  const request: z.ZodType = INTERNAL_RPCS[name].command;
  return nc.subscribe(subject, {
    queue,
    callback: (subscriptionError, msg) => {
      if (subscriptionError) {
        logger.error({ err: subscriptionError, subject }, "rpc subscription failed");
        return;
      }
      void answer(msg);
    },
  });

  async function answer(msg: Msg): Promise<void> {
    const stopTimer = rpcServedSeconds.startTimer({ subject: label });
    const received = receivedTrace(msg.headers);
    const span = tracingOn()
      ? startSpan(subject, SPAN_KIND.server, received, natsSpanAttributes(subject, received?.requestId))
      : undefined;
    const served = servedRequest(logger, received, span);
    let reply: RpcReply;
    try {
      const parsed = request.safeParse(decodeJson(msg.data));
      if (!parsed.success) {
        throw new AppError("request.invalid", "The request does not match the schema.", {
          details: { issues: zodIssues(parsed.error) },
        });
      }
      reply = { ok: true, payload: await handle(parsed.data as ReceivedCommand<N>, served) };
    } catch (error) {
      const failure = asServiceError(error);
      if (failure.code === "internal.error") served.log.error({ err: error, subject }, "rpc handler failed");
      else if (!isAppError(error)) served.log.warn({ err: error, subject }, "rpc handler could not reach NATS");
      reply = { ok: false, error: failure.toData() };
    }
    const failure = reply.ok ? undefined : spanFailure(reply.error);
    span?.end(failure);
    if (msg.reply) msg.respond(encodeJson(reply));
    stopTimer({ outcome: failure === undefined ? "ok" : failure.failed ? "failed" : "refused" });
  }
}

/** An error answer marks the span with its code; as failed when it is the service's fault (5xx). */
function spanFailure(error: ErrorData): { type: string; failed: boolean } {
  // A code this build does not know (a newer replica's) counts as a failure.
  return { type: String(error.code), failed: !isErrorCode(error.code) || errorSpec(error.code).http >= 500 };
}

export type RequestRpcOptions<N extends InternalRpcName = InternalRpcName> = RpcAddress<N> & {
  timeoutMs?: number;
  /** The request this call is part of: its id and trace context travel in the message headers. */
  trace?: RequestTrace | undefined;
};

/** The headers that carry a request's trace; undefined (no headers at all) when there is none. */
function traceHeaders(trace: RequestTrace | undefined, span: TraceSpan | undefined): MsgHdrs | undefined {
  if (trace === undefined && span === undefined) return undefined;
  const sent = headers();
  if (trace?.requestId !== undefined) sent.set(TRACE_HEADERS.requestId, trace.requestId);
  const traceparent = span?.traceparent ?? trace?.traceparent;
  const tracestate = span ? span.tracestate : trace?.tracestate;
  if (traceparent) sent.set(TRACE_HEADERS.traceparent, traceparent);
  if (tracestate) sent.set(TRACE_HEADERS.tracestate, tracestate);
  return sent;
}

/** `NATS/1.0` and the blank line that ends a header block. */
const HEADER_FRAME_BYTES = "NATS/1.0\r\n\r\n".length;

/**
 * Room kept for the headers a JetStream or KV write adds to the data (an expected last
 * sequence, a message id, a TTL, a rollup): each under 60 bytes, all of them together far
 * under this.
 */
export const WRITE_HEADER_BYTES = 512;

/** The bytes `headers` take on the wire (what nats.js adds to the data before it checks `max_payload`); 0 for none. */
export function headerWireBytes(sent: MsgHdrs | undefined): number {
  if (sent === undefined) return 0;
  let bytes = HEADER_FRAME_BYTES;
  for (const [name, values] of sent) {
    for (const value of values) bytes += Buffer.byteLength(`\r\n${name}: ${value}`);
  }
  return bytes;
}

/**
 * Refuses a message larger than the NATS server's `max_payload` before it is sent or
 * stored: it is the caller's body that is too large to cross between the services or to
 * be kept (the body limit counts the body alone), so nothing is written and no retry helps.
 * NATS counts the headers in the payload, so the check does too: `headerBytes`, the
 * headers sent with the data (by default the room a JetStream or KV write's headers take).
 */
export function assertFitsMessage(
  nc: NatsConnection,
  data: Uint8Array,
  what = "request",
  headerBytes = WRITE_HEADER_BYTES,
): void {
  const maxBytes = nc.info?.max_payload;
  const wireBytes = data.length + headerBytes;
  if (maxBytes === undefined || wireBytes <= maxBytes) return;
  throw new AppError(
    "request.too_large",
    `The ${what} would be a ${wireBytes}-byte message, over the ${maxBytes}-byte message limit between the services. Send a smaller body.`,
    {
      details: { max_bytes: maxBytes },
    },
  );
}

/**
 * Asks one internal RPC (`INTERNAL_RPCS`) and returns its reply, checked against the RPC's
 * reply schema, or throws the AppError the service answered with. No responder or no answer
 * in time is `service.unavailable`. With tracing on, the call is a client span, the child of
 * `trace`'s context (or a new trace's root).
 */
export async function requestRpc<N extends InternalRpcName>(
  nc: NatsConnection,
  name: N,
  command: InternalCommand<N>,
  ...[options]: N extends AddressedRpc ? [RequestRpcOptions<N>] : [RequestRpcOptions<N>?]
): Promise<InternalReply<N>> {
  const { timeoutMs = 5_000, trace, address } = (options ?? {}) as RequestRpcOptions;
  const subject = rpcSubject(name, address);
  const response: z.ZodType = INTERNAL_RPCS[name].reply;
  const data = encodeJson(command);
  const span = tracingOn()
    ? startSpan(subject, SPAN_KIND.client, trace, natsSpanAttributes(subject, trace?.requestId))
    : undefined;
  const sent = traceHeaders(trace, span);
  try {
    assertFitsMessage(nc, data, "request", headerWireBytes(sent));
  } catch (error) {
    span?.end({ type: "request.too_large", failed: false });
    throw error;
  }
  const stopTimer = natsRequestSeconds.startTimer({ subject: rpcSubjectLabel(name, address) });
  let raw: unknown;
  try {
    const msg = await nc.request(
      subject,
      data,
      sent === undefined ? { timeout: timeoutMs } : { timeout: timeoutMs, headers: sent },
    );
    raw = decodeJson(msg.data);
    stopTimer({ outcome: "ok" });
  } catch (error) {
    stopTimer({ outcome: "unavailable" });
    span?.end({ type: "service.unavailable", failed: true });
    // No responder, a timeout or a closed connection: the caller cannot tell which, and may retry.
    throw new AppError("service.unavailable", "A backing service did not answer; try again shortly.", {
      retryAfterSeconds: 1,
      cause: error,
    });
  }
  const reply = raw as RpcReply;
  span?.end(reply.ok ? undefined : spanFailure(reply.error));
  if (!reply.ok) throw AppError.fromData(reply.error);
  return response.parse(reply.payload) as InternalReply<N>;
}
