import { mkdir } from "node:fs/promises";
import { connectNats } from "../../shared/nats/index.js";
import { UnsupportedServerError } from "../../shared/nats-server/index.js";
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
  type Service,
  warnUnknownSettings,
} from "../../shared/runtime/index.js";
import type { Server } from "node:http";
import { buildBilling } from "../billing/billing.js";
import { loadConfig as loadBillingConfig } from "../billing/config.js";
import { loadConfig as loadGatewayConfig } from "../gateway/config.js";
import { buildGateway } from "../gateway/gateway.js";
import { loadConfig as loadLogRelayConfig } from "../log-relay/config.js";
import { buildLogRelay } from "../log-relay/log-relay.js";
import { loadConfig as loadNodeRegistryConfig } from "../node-registry/config.js";
import { buildNodeRegistry } from "../node-registry/node-registry.js";
import { loadConfig as loadSchedulerConfig } from "../scheduler/config.js";
import { buildScheduler } from "../scheduler/scheduler.js";
import { loadConfig as loadWebhooksConfig } from "../webhooks/config.js";
import { buildWebhooks } from "../webhooks/webhooks.js";
import { bootstrapDev } from "./bootstrap.js";
import { type AgentLine, printBanner } from "./banner.js";
import { LOCAL_STREAM_SIZES, loadConfig } from "./config.js";
import { natsForDev } from "./embedded-nats.js";
import { type LocalAgent, startLocalAgent } from "./local-agent.js";

/**
 * `make dev`: the whole system in one process — nats-server (unless NATS_URL is set),
 * the six services, each on its own NATS connection as in production — plus the
 * bootstrap of a local app and admin login, and one local agent so jobs really run.
 */
function fail(message: string, exitCode = 1): never {
  process.stderr.write(`make dev: ${message}\n`);
  process.exit(exitCode);
}

let config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) fail(error.message, 2);
  throw error;
}
await mkdir(config.CJS_DATA_DIR, { recursive: true });
process.stdout.write(
  config.NATS_URL
    ? `Using NATS at ${config.NATS_URL}\n`
    : `Starting nats-server (store in ${config.CJS_DATA_DIR}/nats)…\n`,
);
const nats = await natsForDev({
  natsUrl: config.NATS_URL,
  dataDir: config.CJS_DATA_DIR,
  port: config.CJS_NATS_PORT,
  env: process.env,
}).catch((error: Error) => fail(error.message));

const env = {
  ...LOCAL_STREAM_SIZES,
  ...process.env,
  NATS_URL: nats.url,
  CJS_HOST: config.CJS_HOST,
  CJS_PORT: String(config.CJS_PORT),
  CJS_DEV_OUTBOX: process.env.CJS_DEV_OUTBOX ?? "true",
};
const loggerFor = (service: string) => createLogger({ service, level: config.LOG_LEVEL, pretty: process.stdout.isTTY });
const logger = loggerFor("dev");
warnUnknownSettings(logger, process.env, KNOWN_SETTINGS);
collectProcessMetrics();

const connect = (name: string) =>
  connectNats({ url: nats.url, credentials: process.env, name: `cjs-${name}`, logger: loggerFor(name) });
/** What every service gets: its own connection and logger, and the system clock. */
const depsFor = async (name: string) => ({ nc: await connect(name), logger: loggerFor(name), clock: systemClock });
const services: Service[] = [];
let gatewayAddress: string;
let ops: Server;
let paymentProvider: string | undefined;
try {
  const billingConfig = loadBillingConfig(env);
  paymentProvider = billingConfig.CJS_STRIPE_SECRET_KEY === undefined ? "sandbox" : "stripe";
  const gateway = await buildGateway({ ...(await depsFor("gateway")), config: loadGatewayConfig(env) });
  services.push(
    gateway,
    buildScheduler({ ...(await depsFor("scheduler")), config: loadSchedulerConfig(env) }),
    buildNodeRegistry({ ...(await depsFor("node-registry")), config: loadNodeRegistryConfig(env) }),
    buildLogRelay({ ...(await depsFor("log-relay")), config: loadLogRelayConfig(env) }),
    buildBilling({ ...(await depsFor("billing")), config: billingConfig }),
    // Receivers on this machine are allowed here (a local test server), unless the operator says otherwise.
    buildWebhooks({
      ...(await depsFor("webhooks")),
      config: loadWebhooksConfig({ CJS_WEBHOOKS_ALLOW_PRIVATE_URLS: "true", ...env }),
    }),
  );
  for (const service of services) await service.start();
  gatewayAddress = await gateway.app.listen({ host: config.CJS_HOST, port: config.CJS_PORT });
  // One ops server for the whole process: its /metrics has every service's series, its /readyz each service.
  ops = await startOpsServer({
    host: config.CJS_OPS_HOST,
    port: config.CJS_OPS_PORT,
    checks: Object.fromEntries(services.map((service) => [service.name, service.ready])),
  });
} catch (error) {
  await nats.stop();
  if (error instanceof ConfigError || error instanceof UnsupportedServerError) fail(error.message);
  if ((error as NodeJS.ErrnoException).code === "EADDRINUSE")
    fail(
      `port ${(error as { port?: number }).port ?? config.CJS_PORT} is taken; set CJS_PORT or CJS_OPS_PORT to another port`,
    );
  throw error;
}

const adminConnection = await connect("dev-bootstrap");
const login = await bootstrapDev(adminConnection, {
  dataDir: config.CJS_DATA_DIR,
  appId: config.CJS_APP_ID,
  email: config.CJS_ADMIN_EMAIL,
  password: config.CJS_ADMIN_PASSWORD,
}).catch(async (error: Error) => {
  await nats.stop();
  return fail(`could not create the local app and admin: ${error.message}`);
});
// The agent talks to the gateway over HTTP like any other; a gateway on every address is reached on loopback.
const agentGatewayUrl = gatewayAddress.replace(/\/\/(0\.0\.0\.0|\[::\])(?=:)/, "//127.0.0.1");
let localAgent: LocalAgent | undefined;
let agentLine: AgentLine;
try {
  localAgent = await startLocalAgent({
    gatewayUrl: agentGatewayUrl,
    nc: adminConnection,
    login,
    dataDir: config.CJS_DATA_DIR,
    logger: loggerFor("agent"),
    logLevel: config.LOG_LEVEL,
    env: process.env,
  });
  agentLine = { nodeId: localAgent.nodeId, pool: localAgent.pool, slots: localAgent.slots };
  const running = localAgent.agent;
  process.once("exit", () => running.killNow());
  running.done.catch((error: Error) =>
    logger.error({ error: error.message }, "the local agent stopped; jobs will wait for a node"),
  );
} catch (error) {
  agentLine = { error: (error as Error).message };
  logger.warn({ error: (error as Error).message }, "the local agent did not start; jobs will wait for a node");
}
await adminConnection.close();

printBanner({
  gatewayUrl: gatewayAddress,
  opsUrl: serverUrl(ops),
  natsUrl: nats.url,
  storeDir: nats.storeDir,
  login,
  agent: agentLine,
  paymentProvider,
});

installShutdown(logger, async () => {
  // The agent first, while the gateway still answers; jobs it kills are reported at the next start.
  await localAgent?.agent.stop();
  for (const service of [...services].reverse()) await service.stop();
  await closeOpsServer(ops);
  await nats.stop();
});
