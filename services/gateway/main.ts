import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetStreamHealth, type JetStreamHealth, provisionedStreams } from "../../shared/nats/index.js";
import { connectWhenReachable, reportStartFailure, startWithRetries, untilJetStreamReady } from "../../shared/process/index.js";
import {
  closeOpsServer,
  collectProcessMetrics,
  ConfigError,
  createLogger,
  installShutdown,
  KNOWN_SETTINGS,
  serverUrl,
  startOpsServer,
  systemClock,
  warnUnknownSettings,
} from "../../shared/runtime/index.js";
import { startTracing } from "../../shared/tracing/index.js";
import { loadConfig } from "./config.js";
import { buildGateway, type Gateway } from "./gateway.js";

let config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`gateway: ${error.message}\n`);
  process.exit(2);
}
const logger = createLogger({ service: "gateway", level: config.LOG_LEVEL });
warnUnknownSettings(logger, process.env, KNOWN_SETTINGS);
const tracing = startTracing("gateway", config, logger);
collectProcessMetrics();

let nc: NatsConnection | undefined;
let jetStream: JetStreamHealth | undefined;
let gateway: Gateway | undefined;
/** Until the API is built, a plain server on the API port says the process lives (/healthz) and is not ready (/readyz). */
let waiting: Server | undefined;
installShutdown(logger, async () => {
  await gateway?.stop();
  jetStream?.stop();
  if (waiting?.listening) await closeOpsServer(waiting);
  await nc?.drain();
  await tracing.shutdown();
});

try {
  waiting = await startOpsServer({
    host: config.CJS_HOST,
    port: config.CJS_PORT,
    checks: { nats: () => nc !== undefined && !nc.isClosed(), jetstream: () => jetStream?.ready() ?? false, gateway: () => false },
  });
  const { port } = waiting.address() as AddressInfo;
  const opsUrl = serverUrl(waiting);
  logger.info({ ops: opsUrl }, `gateway serves /healthz and /readyz on ${opsUrl} while it starts`);

  const connection = await connectWhenReachable({ url: config.NATS_URL, credentials: config, name: "cjs-gateway", logger });
  nc = connection;
  const health = jetStreamHealth(connection, () => provisionedStreams(connection), { intervalMs: config.CJS_JETSTREAM_PROBE_INTERVAL_MS });
  jetStream = health;
  await untilJetStreamReady(health, config.NATS_URL, logger);
  const deps = { nc: connection, logger, clock: systemClock, config, readinessChecks: { jetstream: health.ready } };
  gateway = await startWithRetries(() => buildGateway(deps), { name: "gateway", logger, jetStream: health });
  // The API takes over the port (the same one when CJS_PORT is 0).
  await closeOpsServer(waiting);
  const address = await gateway.app.listen({ host: config.CJS_HOST, port });
  logger.info({ address }, `gateway listening on ${address}`);
} catch (error) {
  process.exit(reportStartFailure(logger, "gateway", error));
}
