import { diag, DiagLogLevel, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { BaseConfig, Logger } from "../runtime/index.js";
import { setActiveTracer } from "./spans.js";

/** The settings tracing reads, from the process's parsed config. */
export type TracingSettings = Pick<
  BaseConfig,
  | "OTEL_EXPORTER_OTLP_ENDPOINT"
  | "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
  | "OTEL_SERVICE_NAME"
  | "OTEL_SDK_DISABLED"
  | "OTEL_BSP_SCHEDULE_DELAY"
>;

export interface Tracing {
  readonly enabled: boolean;
  /** Sends the spans still waiting, within `timeoutMs`, and stops; a collector that is down costs no more than that. */
  shutdown(timeoutMs?: number): Promise<void>;
}

const SHUTDOWN_FLUSH_MS = 3_000;

/**
 * Where spans are posted: the traces endpoint as given, else `/v1/traces` under the
 * general one (OTLP's rule); undefined when neither is set or the SDK is disabled.
 */
export function tracesUrl(settings: TracingSettings): string | undefined {
  if (settings.OTEL_SDK_DISABLED) return undefined;
  if (settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined) return settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = settings.OTEL_EXPORTER_OTLP_ENDPOINT;
  return base === undefined ? undefined : `${base.replace(/\/+$/, "")}/v1/traces`;
}

/**
 * Sets the process's tracer provider up when tracing is wanted: spans batched and sent as
 * OTLP/HTTP JSON, `service.name` = `cjs-<service>` unless OTEL_SERVICE_NAME names it.
 * Otherwise nothing is set up and the API stays the no-op. Exporting runs beside the
 * requests: a failed export is logged (as a warning) and dropped, never awaited by a request.
 */
export function startTracing(service: string, settings: TracingSettings, logger: Logger): Tracing {
  const url = tracesUrl(settings);
  if (url === undefined) return { enabled: false, shutdown: async () => undefined };
  const log = logger.child({ component: "otel" });
  // The SDK's own words (a failed export's error, as JSON) go in a field: the line's message stays one searchable text.
  const report = (message: string, ...args: unknown[]) =>
    log.warn({ otel: message, args }, "tracing: the OpenTelemetry SDK reports a problem (spans may be lost)");
  const quiet = () => undefined;
  diag.setLogger({ error: report, warn: report, info: quiet, debug: quiet, verbose: quiet }, DiagLogLevel.WARN);
  const serviceName = settings.OTEL_SERVICE_NAME ?? `cjs-${service}`;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    // The exporter finds its headers, timeout and compression in the other OTEL_EXPORTER_OTLP_* variables itself.
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url }),
        scheduledDelayMillis: settings.OTEL_BSP_SCHEDULE_DELAY,
      }),
    ],
  });
  trace.setGlobalTracerProvider(provider);
  setActiveTracer(provider.getTracer("cjs"));
  log.info({ service_name: serviceName }, "tracing on: spans are exported over OTLP");
  return {
    enabled: true,
    async shutdown(timeoutMs = SHUTDOWN_FLUSH_MS) {
      setActiveTracer(undefined);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs).unref()));
      await Promise.race([
        provider.shutdown().catch((error: unknown) => log.warn({ err: error }, "could not send the last spans")),
        late,
      ]);
      clearTimeout(timer);
    },
  };
}
