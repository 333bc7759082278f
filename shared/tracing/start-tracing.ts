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
  "OTEL_EXPORTER_OTLP_ENDPOINT" | "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" | "OTEL_SERVICE_NAME" | "OTEL_SDK_DISABLED" | "OTEL_BSP_SCHEDULE_DELAY"
>;

export interface Tracing {
  readonly enabled: boolean;
  /** Sends the spans still waiting, within `timeoutMs`, and stops; a collector that is down costs no more than that. */
  shutdown(timeoutMs?: number): Promise<void>;
}

const SHUTDOWN_FLUSH_MS = 3_000;

/** True when an OTLP endpoint is set and the SDK is not disabled. */
export function tracingWanted(settings: TracingSettings): boolean {
  const endpoint = settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? settings.OTEL_EXPORTER_OTLP_ENDPOINT;
  return endpoint !== undefined && !settings.OTEL_SDK_DISABLED;
}

/**
 * Sets the process's tracer provider up when tracing is wanted: spans batched and sent as
 * OTLP/HTTP JSON, `service.name` = `cjs-<service>` unless OTEL_SERVICE_NAME names it.
 * Otherwise nothing is set up and the API stays the no-op. Exporting runs beside the
 * requests: a failed export is logged (as a warning) and dropped, never awaited by a request.
 */
export function startTracing(service: string, settings: TracingSettings, logger: Logger): Tracing {
  if (!tracingWanted(settings)) return { enabled: false, shutdown: async () => undefined };
  const log = logger.child({ component: "otel" });
  diag.setLogger(
    {
      error: (message, ...args) => log.warn({ args }, message),
      warn: (message, ...args) => log.warn({ args }, message),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    DiagLogLevel.WARN,
  );
  const serviceName = settings.OTEL_SERVICE_NAME ?? `cjs-${service}`;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    // The exporter finds its endpoint, headers, timeout and compression in the OTEL_EXPORTER_OTLP_* variables.
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), scheduledDelayMillis: settings.OTEL_BSP_SCHEDULE_DELAY })],
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
      await Promise.race([provider.shutdown().catch((error: unknown) => log.warn({ err: error }, "could not send the last spans")), late]);
      clearTimeout(timer);
    },
  };
}
