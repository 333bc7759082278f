import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetStreamHealth, type JetStreamHealth, provisionedStreams } from "../../shared/nats/index.js";
import {
  connectWhenReachable,
  reportStartFailure,
  startWithRetries,
  untilJetStreamReady,
} from "../../shared/process/index.js";
import {
  closeOpsServer,
  collectProcessMetrics,
  ConfigError,
  createLogger,
  installShutdown,
  KNOWN_SETTINGS,
  natsConnected,
  type ReadinessCheck,
  serverUrl,
  startOpsServer,
  systemClock,
  warnUnknownSettings,
} from "../../shared/runtime/index.js";
import { startTracing } from "../../shared/tracing/index.js";
import { loadConfig } from "./config.js";
import { buildGateway, type Gateway } from "./gateway.js";
import { configuredKeySets } from "./secrets/key-sources.js";

let config;
let keySets;
try {
  config = loadConfig();
  keySets = configuredKeySets(config);
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
let natsUp: ReadinessCheck = () => false;
let jetStream: JetStreamHealth | undefined;
let gateway: Gateway | undefined;
/** The ops port: /metrics, /healthz and /readyz for the whole life of the process, apart from the public API. */
let ops: Server | undefined;
/**
 * Until the API is built, a plain server on the API port says the process lives (/healthz)
 * and is not ready (/readyz), and answers every operation 503 with Retry-After; no /metrics there.
 */
let waiting: Server | undefined;
installShutdown(logger, async () => {
  await gateway?.stop();
  jetStream?.stop();
  if (waiting?.listening) await closeOpsServer(waiting);
  if (ops) await closeOpsServer(ops);
  await nc?.drain();
  await tracing.shutdown();
});

try {
  const checks = {
    nats: () => natsUp(),
    jetstream: () => jetStream?.ready() ?? false,
    jetstream_storage: () => jetStream?.storageReady() ?? true,
    gateway: () => gateway?.ready() ?? false,
  };
  ops = await startOpsServer({ host: config.CJS_OPS_HOST, port: config.CJS_OPS_PORT, checks });
  waiting = await startOpsServer({
    host: config.CJS_HOST,
    port: config.CJS_PORT,
    checks,
    metrics: false,
    starting: true,
  });
  const { port } = waiting.address() as AddressInfo;
  const opsUrl = serverUrl(ops);
  const apiUrl = serverUrl(waiting);
  logger.info(
    { ops: opsUrl, api: apiUrl },
    `gateway serves /healthz and /readyz on ${opsUrl}, with /metrics, and on ${apiUrl} while it starts`,
  );

  const connection = await connectWhenReachable({
    url: config.NATS_URL,
    credentials: config,
    name: "cjs-gateway",
    logger,
  });
  nc = connection;
  natsUp = natsConnected(connection);
  const health = jetStreamHealth(connection, () => provisionedStreams(connection), {
    intervalMs: config.CJS_JETSTREAM_PROBE_INTERVAL_MS,
    service: "gateway",
    maxStoreBytes: config.CJS_JETSTREAM_MAX_STORE_BYTES,
  });
  jetStream = health;
  await untilJetStreamReady(health, config.NATS_URL, logger);
  const deps = {
    nc: connection,
    logger,
    clock: systemClock,
    config,
    keySets,
    readinessChecks: { jetstream: health.ready, jetstream_storage: health.storageReady },
  };
  gateway = await startWithRetries(() => buildGateway(deps), { name: "gateway", logger, jetStream: health });
  // The API takes over the port (the same one when CJS_PORT is 0).
  await closeOpsServer(waiting);
  const address = await gateway.app.listen({ host: config.CJS_HOST, port });
  logger.info({ address }, `gateway listening on ${address}`);
} catch (error) {
  process.exit(reportStartFailure(logger, "gateway", error));
}
