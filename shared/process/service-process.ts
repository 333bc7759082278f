import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats } from "../nats/index.js";
import {
  type BaseConfig,
  type Clock,
  ConfigError,
  collectProcessMetrics,
  createLogger,
  installShutdown,
  type Logger,
  natsConnected,
  type Service,
  startOpsServer,
  systemClock,
} from "../runtime/index.js";

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
 * is invalid), connect, build, start, serve `/metrics` `/healthz` `/readyz`, and on
 * SIGTERM stop the service before closing the ops server and draining NATS. A failure
 * while starting is logged and exits 1; the returned promise never rejects.
 */
export async function runServiceProcess<C extends ServiceProcessConfig>(options: ServiceProcessOptions<C>): Promise<void> {
  const { name } = options;
  let config: Readonly<C>;
  try {
    config = options.loadConfig();
  } catch (error) {
    process.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(error instanceof ConfigError ? 2 : 1);
  }

  const logger = createLogger({ service: name, level: config.LOG_LEVEL });
  try {
    collectProcessMetrics();
    const nc = await connectNats({ url: config.NATS_URL, credentials: config, name, logger });
    const service = options.build({ nc, logger, clock: systemClock, config });
    await service.start();
    const ops = await startOpsServer({
      host: config.CJS_OPS_HOST,
      port: config.CJS_OPS_PORT,
      checks: { nats: natsConnected(nc), service: () => service.ready() },
    });
    logger.info({ ops: opsUrl(ops) }, `${name} ready`);
    installShutdown(logger, async () => {
      await service.stop();
      await closeServer(ops);
      await nc.drain();
    });
  } catch (error) {
    logger.fatal({ err: error }, `${name} failed to start`);
    process.exit(1);
  }
}

function opsUrl(server: Server): string {
  const { address, family, port } = server.address() as AddressInfo;
  return `http://${family === "IPv6" ? `[${address}]` : address}:${port}`;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
}
