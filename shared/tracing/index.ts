export {
  acceptedRequestId,
  acceptedTraceparent,
  acceptedTracestate,
  TRACE_HEADERS,
  traceIdOf,
  traceLogFields,
} from "./request-trace.js";
export type { RequestTrace } from "./request-trace.js";
export { natsSpanAttributes, SPAN_KIND, startSpan, tracingOn } from "./spans.js";
export type { ParentContext, TraceSpan } from "./spans.js";
export { startTracing, tracesUrl } from "./start-tracing.js";
export type { Tracing, TracingSettings } from "./start-tracing.js";
