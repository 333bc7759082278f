import type { NatsConnection } from "@nats-io/transport-node";
import { reportStartFailure } from "./start-failure.js";
import { jetStreamHealth, type JetStreamHealth, provisionedStreams } from "../nats/index.js";
import {
  type BaseConfig,
  type Clock,
  closeOpsServer,
  ConfigError,
  collectProcessMetrics,
  createLogger,
  installShutdown,
  KNOWN_SETTINGS,
  type Logger,
  natsConnected,
  type ReadinessCheck,
  type Service,
  startOpsServer,
  serverUrl,
  systemClock,
  warnUnknownSettings,
} from "../runtime/index.js";
import { startTracing } from "../tracing/index.js";
import { startWithRetries } from "./start-with-retries.js";
import { connectWhenReachable, untilJetStreamReady } from "./wait-for-nats.js";

/** What every `build<Name>(deps)` factory receives. */
export interface ServiceDeps<C> {
  nc: NatsConnection;
  logger: Logger;
  clock: Clock;
  config: Readonly<C>;
}

/** Settings a service process needs beyond `BaseConfig`: where its ops server listens. */
export type ServiceProcessConfig = BaseConfig & { CJS_OPS_HOST: string; CJS_OPS_PORT: number };

export interface ServiceProcessOptions<C extends ServiceProcessConfig> {
  /** The service name: the logger's `service`, the NATS connection name, the log lines. */
  name: string;
  loadConfig: () => Readonly<C>;
  build: (deps: ServiceDeps<C>) => Service;
}

/**
 * The whole life of a one-service process, for its `main.ts`: load config (exit 2 when it
 * is invalid), warn of `CJS_*` variables no process reads, serve `/metrics` `/healthz` `/readyz`, connect (waiting for NATS as long as
 * it takes, and saying so in the log), wait for JetStream, build and start, and on SIGTERM
 * stop the service before closing the ops server, draining NATS and sending the last spans
 * (tracing is on when an OTLP endpoint is set: shared/tracing). `/readyz` is 503
 * until the connection is up, JetStream answers for every stream the service provisioned,
 * and the service has started. A failure while starting is logged and exits 1 (2 for a
 * setting found wrong only when used, such as an unreadable `NATS_CREDS_FILE`); the
 * returned promise never rejects.
 */
export async function runServiceProcess<C extends ServiceProcessConfig>(
  options: ServiceProcessOptions<C>,
): Promise<void> {
  const { name } = options;
  let config: Readonly<C>;
  try {
    config = options.loadConfig();
  } catch (error) {
    process.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(error instanceof ConfigError ? 2 : 1);
  }

  const logger = createLogger({ service: name, level: config.LOG_LEVEL });
  warnUnknownSettings(logger, process.env, KNOWN_SETTINGS);
  const tracing = startTracing(name, config, logger);
  let nc: NatsConnection | undefined;
  let natsUp: ReadinessCheck = () => false;
  let jetStream: JetStreamHealth | undefined;
  let service: Service | undefined;
  try {
    collectProcessMetrics();
    const ops = await startOpsServer({
      host: config.CJS_OPS_HOST,
      port: config.CJS_OPS_PORT,
      checks: {
        nats: () => natsUp(),
        jetstream: () => jetStream?.ready() ?? false,
        jetstream_storage: () => jetStream?.storageReady() ?? true,
        service: () => service?.ready() ?? false,
      },
    });
    const opsUrl = serverUrl(ops);
    logger.info({ ops: opsUrl }, `${name} serves /healthz and /readyz on ${opsUrl}`);
    installShutdown(logger, async () => {
      await service?.stop();
      jetStream?.stop();
      await closeOpsServer(ops);
      await nc?.drain();
      await tracing.shutdown();
    });

    const connection = await connectWhenReachable({ url: config.NATS_URL, credentials: config, name, logger });
    nc = connection;
    natsUp = natsConnected(connection);
    const health = jetStreamHealth(connection, () => provisionedStreams(connection), {
      intervalMs: config.CJS_JETSTREAM_PROBE_INTERVAL_MS,
      service: name,
      maxStoreBytes: config.CJS_JETSTREAM_MAX_STORE_BYTES,
    });
    jetStream = health;
    await untilJetStreamReady(health, config.NATS_URL, logger);
    service = await startWithRetries(() => options.build({ nc: connection, logger, clock: systemClock, config }), {
      name,
      logger,
      jetStream: health,
    });
    logger.info({ ops: opsUrl }, `${name} ready`);
  } catch (error) {
    process.exit(reportStartFailure(logger, name, error));
  }
}
