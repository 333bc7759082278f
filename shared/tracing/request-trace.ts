import { parseTraceParent } from "@opentelemetry/core";

/**
 * What one request carries from process to process: its id (the gateway's `X-Request-ID`)
 * and, when it has one, the W3C trace context of the span the next hop is a child of.
 * Work that no request started (a background pass) has no id, but with tracing on its
 * calls still carry their span's context.
 */
export interface RequestTrace {
  readonly requestId?: string | undefined;
  readonly traceparent?: string | undefined;
  readonly tracestate?: string | undefined;
}

/** The NATS message headers a request's trace travels in. */
export const TRACE_HEADERS = {
  requestId: "Cjs-Request-Id",
  traceparent: "traceparent",
  tracestate: "tracestate",
} as const;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** W3C caps `tracestate` at 32 members of at most 256 characters each. */
const MAX_TRACESTATE_CHARS = 8_192;

/** A caller's request id when it is a sane token (one of ours, or a client's `X-Request-ID`), else undefined. */
export function acceptedRequestId(value: unknown): string | undefined {
  return typeof value === "string" && REQUEST_ID.test(value) ? value : undefined;
}

/** A `traceparent` as received when it is a valid W3C one (not all-zero ids, a known layout), else undefined. */
export function acceptedTraceparent(value: unknown): string | undefined {
  if (typeof value !== "string" || parseTraceParent(value) === null) return undefined;
  // The parser allows a space at either end; the value passed on has none.
  return value.trim();
}

/** A `tracestate` kept only beside a valid `traceparent` and within the W3C size. */
export function acceptedTracestate(value: unknown): string | undefined {
  return typeof value === "string" && value.length <= MAX_TRACESTATE_CHARS ? value : undefined;
}

/** The trace id of a valid `traceparent` (the 32 hex digits after the version). */
export function traceIdOf(traceparent: string): string {
  return traceparent.slice(3, 35);
}

/** The fields that name a request in a log line: `request_id`, and `trace_id` when it has a trace context. */
export function traceLogFields(trace: RequestTrace): { request_id?: string; trace_id?: string } {
  const fields: { request_id?: string; trace_id?: string } = {};
  if (trace.requestId !== undefined) fields.request_id = trace.requestId;
  if (trace.traceparent !== undefined) fields.trace_id = traceIdOf(trace.traceparent);
  return fields;
}
