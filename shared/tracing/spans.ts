import {
  type Attributes,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { ATTR_ERROR_TYPE } from "@opentelemetry/semantic-conventions";

/**
 * The process's tracer while tracing is on (`startTracing`), else undefined: the request
 * path tests it before any span work, so tracing off costs one comparison and no object.
 */
let activeTracer: Tracer | undefined;
const propagator = new W3CTraceContextPropagator();

export function setActiveTracer(tracer: Tracer | undefined): void {
  activeTracer = tracer;
}

/** Whether spans are made: callers test it before building a span's name and attributes, so tracing off allocates nothing. */
export function tracingOn(): boolean {
  return activeTracer !== undefined;
}

/** The W3C context of the span a new span is the child of (none: the new span starts a trace). */
export interface ParentContext {
  readonly traceparent?: string | undefined;
  readonly tracestate?: string | undefined;
}

/** One span of ours, with the W3C context its children carry. */
export interface TraceSpan {
  readonly traceparent: string;
  readonly tracestate: string | undefined;
  setAttribute(key: string, value: string | number | boolean): void;
  /**
   * Ends the span. A failure marks it with `error.type` (the stable error code, never a
   * message: one may quote the caller's data), and as failed when `failed` says so.
   */
  end(failure?: { type: string; failed: boolean }): void;
}

export const SPAN_KIND = { server: SpanKind.SERVER, client: SpanKind.CLIENT } as const;

/** What every span of a NATS request records: the subject (never the body), and the request id to find its log lines by. */
export function natsSpanAttributes(subject: string, requestId: string | undefined): Attributes {
  return requestId === undefined
    ? { "messaging.system": "nats", "messaging.destination.name": subject }
    : { "messaging.system": "nats", "messaging.destination.name": subject, "cjs.request_id": requestId };
}

/** Starts a span when tracing is on; undefined when it is off. */
export function startSpan(
  name: string,
  kind: SpanKind,
  parent: ParentContext | undefined,
  attributes: Attributes,
): TraceSpan | undefined {
  if (activeTracer === undefined) return undefined;
  const parentContext =
    parent?.traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, parent, defaultTextMapGetter);
  const span = activeTracer.startSpan(name, { kind, attributes, root: parentContext === ROOT_CONTEXT }, parentContext);
  const carrier: { traceparent?: string; tracestate?: string } = {};
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
  return wrap(span, carrier.traceparent ?? "", carrier.tracestate);
}

function wrap(span: Span, traceparent: string, tracestate: string | undefined): TraceSpan {
  return {
    traceparent,
    tracestate,
    setAttribute: (key, value) => void span.setAttribute(key, value),
    end(failure) {
      if (failure) {
        span.setAttribute(ATTR_ERROR_TYPE, failure.type);
        if (failure.failed) span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
  };
}
