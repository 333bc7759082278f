import type { FastifyInstance, FastifyRequest } from "fastify";
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
} from "@opentelemetry/semantic-conventions";
import {
  acceptedTraceparent,
  acceptedTracestate,
  type RequestTrace,
  SPAN_KIND,
  startSpan,
  traceIdOf,
  tracingOn,
  type TraceSpan,
} from "../../../shared/tracing/index.js";
import { requestHeader } from "./request-header.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The request's id and the trace context its calls to the services carry (set on arrival). */
    trace: RequestTrace;
    /** The request's server span while tracing is on. */
    traceSpan: TraceSpan | undefined;
  }
}

/** Probes, polled every few seconds by the orchestrator and the metrics scraper: spans of them would drown the requests' traces. */
const UNTRACED_ROUTES: ReadonlySet<string> = new Set(["/healthz", "/readyz", "/metrics"]);

/** The request's server span: named after its route's pattern, child of the caller's span when it sent one. */
function startRequestSpan(
  request: FastifyRequest,
  traceparent: string | undefined,
  tracestate: string | undefined,
): TraceSpan | undefined {
  const route = request.routeOptions.url;
  const attributes =
    route === undefined
      ? { [ATTR_HTTP_REQUEST_METHOD]: request.method }
      : { [ATTR_HTTP_REQUEST_METHOD]: request.method, [ATTR_HTTP_ROUTE]: route };
  return startSpan(
    route === undefined ? request.method : `${request.method} ${route}`,
    SPAN_KIND.server,
    { traceparent, tracestate },
    { ...attributes, "cjs.request_id": request.id },
  );
}

/**
 * Every request answers with its `X-Request-ID`, and continues the caller's W3C trace
 * (`traceparent`, `tracestate`) when it sends a valid one. With tracing on the request is a
 * server span named after its route pattern (never the URL: a query may hold a signature),
 * and the answer's `traceparent` is that span's; with tracing off the caller's context is
 * passed on unchanged, and answered back when there is one.
 */
export function traceRequests(app: FastifyInstance): void {
  app.decorateRequest("trace", null as unknown as RequestTrace);
  app.decorateRequest("traceSpan", undefined);
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    const received = acceptedTraceparent(requestHeader(request, "traceparent"));
    const tracestate = received === undefined ? undefined : acceptedTracestate(requestHeader(request, "tracestate"));
    const span =
      tracingOn() && !UNTRACED_ROUTES.has(request.routeOptions.url ?? "")
        ? startRequestSpan(request, received, tracestate)
        : undefined;
    request.traceSpan = span;
    request.trace = span
      ? { requestId: request.id, traceparent: span.traceparent, tracestate: span.tracestate }
      : { requestId: request.id, traceparent: received, tracestate };
    const { traceparent } = request.trace;
    if (traceparent === undefined) return;
    reply.header("traceparent", traceparent);
    request.log = request.log.child({ trace_id: traceIdOf(traceparent) });
  });
  app.addHook("onResponse", async (request, reply) => {
    const span = request.traceSpan;
    if (span === undefined) return;
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, reply.statusCode);
    span.end(reply.statusCode >= 500 ? { type: String(reply.statusCode), failed: true } : undefined);
  });
}
