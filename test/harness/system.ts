import { connect, type NatsConnection } from "@nats-io/transport-node";
import { pino } from "pino";
import { ComputeClient } from "./client.js";
import { App, Business, User } from "../../shared/contract/index.js";
import { requestRpc } from "../../shared/nats/index.js";
import { JOB_PARTITIONS } from "../../shared/records/index.js";
import type { ServiceDeps } from "../../shared/process/index.js";
import {
  type Clock,
  closeOpsServer,
  collectProcessMetrics,
  type Logger,
  randomBase62,
  serverUrl,
  startOpsServer,
  systemClock,
  type Service,
} from "../../shared/runtime/index.js";
import { buildBilling } from "../../services/billing/billing.js";
import { BillingConfig } from "../../services/billing/config.js";
import { LogRelayConfig } from "../../services/log-relay/config.js";
import { buildLogRelay } from "../../services/log-relay/log-relay.js";
import { NodeRegistryConfig } from "../../services/node-registry/config.js";
import { buildNodeRegistry } from "../../services/node-registry/node-registry.js";
import { SchedulerConfig } from "../../services/scheduler/config.js";
import { buildScheduler, type Scheduler } from "../../services/scheduler/scheduler.js";
import { GatewayConfig } from "../../services/gateway/config.js";
import type { NatsTopology, RunningNats } from "./nats-topologies.js";
import { TEST_BURST_LIMIT } from "./test-limits.js";
import { buildGateway, type Gateway } from "../../services/gateway/gateway.js";
import { WebhooksConfig } from "../../services/webhooks/config.js";
import { buildWebhooks } from "../../services/webhooks/webhooks.js";

/** A gateway replica listening on a free port, on its own NATS connection. */
export interface RunningGateway {
  gateway: Gateway;
  nc: NatsConnection;
  baseUrl: string;
  /** Its ops server (`/metrics`, `/healthz`, `/readyz`), apart from the API as in production. */
  opsUrl: string;
  /** One-time codes this replica "sent", newest last, by e-mail. */
  outbox: Map<string, string[]>;
  stop(): Promise<void>;
}

/** `logger`: where the gateway logs (silent unless TEST_LOG_LEVEL says otherwise), for tests that read its lines. */
export async function startGateway(
  natsUrl: string,
  env: Record<string, string> = {},
  options: { clock?: Clock; logger?: Logger } = {},
): Promise<RunningGateway> {
  collectProcessMetrics();
  const config = GatewayConfig.parse({
    NATS_URL: natsUrl,
    CJS_HOST: "127.0.0.1",
    CJS_PORT: "0",
    // The test process hosts several gateways and the tests themselves: its event loop's delay is no one gateway's load, so none sheds unless a test asks.
    CJS_SHED_EVENT_LOOP_DELAY_MS: "0",
    ...TEST_BURST_LIMIT,
    ...env,
  });
  const nc = await connect({
    servers: natsUrl.split(","),
    name: "test-gateway",
    maxReconnectAttempts: -1,
    reconnectTimeWait: 200,
  });
  const outbox = new Map<string, string[]>();
  const gateway = await buildGateway({
    nc,
    config,
    clock: options.clock ?? systemClock,
    logger: options.logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
    sendOtp: async (to, code) => void outbox.set(to, [...(outbox.get(to) ?? []), code]),
  });
  await gateway.start();
  const baseUrl = await gateway.app.listen({ host: "127.0.0.1", port: 0 });
  const ops = await startOpsServer({ host: "127.0.0.1", port: 0, checks: { gateway: gateway.ready } });
  return {
    gateway,
    nc,
    baseUrl,
    opsUrl: serverUrl(ops),
    outbox,
    async stop() {
      await gateway.stop();
      await closeOpsServer(ops);
      await nc.close();
    },
  };
}

/** A fresh tenant made with the operator commands: an app, a business and one user. */
export interface Tenant {
  app: App;
  business: Business;
  user: User;
  password: string;
}

/** `operator: true` makes the business the operator's: its admins may add nodes to operator pools. */
export async function createTenant(
  nc: NatsConnection,
  options: { role?: "admin" | "member"; appId?: string; operator?: boolean } = {},
): Promise<Tenant> {
  const appId = options.appId ?? `t-${randomBase62(10).toLowerCase()}`;
  const existing = options.appId !== undefined;
  const app = existing
    ? { app_id: appId, name: appId, created_at: new Date().toISOString() }
    : await requestRpc(nc, "adminAppCreate", { id: appId, name: `Test ${appId}` });
  const business = await requestRpc(nc, "adminBusinessCreate", {
    app_id: appId,
    name: "Test business",
    operator: options.operator ?? false,
  });
  const password = `pw-${randomBase62(20)}`;
  const user = await requestRpc(nc, "adminUserCreate", {
    app_id: appId,
    business_id: business.business_id,
    email: `user-${randomBase62(8).toLowerCase()}@example.test`,
    password,
    role: options.role ?? "admin",
  });
  return { app, business, user, password };
}

/** Signs the tenant's user in and returns a client carrying the access token, plus the token pair. */
export async function signedInClient(baseUrl: string, tenant: Tenant) {
  const anonymous = new ComputeClient({ baseUrl, appId: tenant.app.app_id });
  const tokens = await anonymous.call("login", { email: tenant.user.email, password: tenant.password });
  return { client: anonymous.with({ accessToken: tokens.access_token }), anonymous, tokens };
}

/** A replica of a backing service on its own connection, as its `main.ts` would run it. */
export interface RunningService {
  service: Service;
  nc: NatsConnection;
  /** Closes the connection without a goodbye, as a crash would (the service's loops die with it). */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

/** Where a harness service logs: silent unless TEST_LOG_LEVEL says otherwise, or the test's own logger. */
export type LoggerFor = (service: string) => Logger;
const testLogger: LoggerFor = () => pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });

async function runService<C>(
  natsUrl: string,
  name: string,
  build: (deps: ServiceDeps<C>) => Service,
  config: C,
  clock: Clock = systemClock,
  loggerFor: LoggerFor = testLogger,
): Promise<RunningService> {
  const nc = await connect({
    servers: natsUrl.split(","),
    name: `test-${name}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 200,
  });
  const service = build({ nc, config, clock, logger: loggerFor(name) });
  await service.start();
  return {
    service,
    nc,
    async crash() {
      await nc.close();
    },
    async stop() {
      await service.stop();
      await nc.close();
    },
  };
}

/** `clock`: the scheduler's time, for tests that move it (quota windows, deadlines). */
export function startScheduler(
  natsUrl: string,
  env: Record<string, string> = {},
  clock: Clock = systemClock,
  loggerFor?: LoggerFor,
) {
  const config = SchedulerConfig.parse({
    NATS_URL: natsUrl,
    CJS_RECONCILE_INTERVAL_MS: "200",
    CJS_PARTITION_LEASE_MS: "1000",
    ...env,
  });
  return runService(natsUrl, "scheduler", buildScheduler, config, clock, loggerFor);
}

export function startNodeRegistry(natsUrl: string, env: Record<string, string> = {}, loggerFor?: LoggerFor) {
  return runService(
    natsUrl,
    "node-registry",
    buildNodeRegistry,
    NodeRegistryConfig.parse({ NATS_URL: natsUrl, CJS_LIVENESS_SWEEP_MS: "200", ...env }),
    systemClock,
    loggerFor,
  );
}

export function startLogRelay(natsUrl: string, env: Record<string, string> = {}, loggerFor?: LoggerFor) {
  return runService(
    natsUrl,
    "log-relay",
    buildLogRelay,
    LogRelayConfig.parse({ NATS_URL: natsUrl, ...env }),
    systemClock,
    loggerFor,
  );
}

export function startBilling(natsUrl: string, env: Record<string, string> = {}, loggerFor?: LoggerFor) {
  return runService(
    natsUrl,
    "billing",
    buildBilling,
    BillingConfig.parse({ NATS_URL: natsUrl, ...env }),
    systemClock,
    loggerFor,
  );
}

/** Receivers are on loopback in tests: allowed unless the test's env says otherwise. */
export function startWebhooks(natsUrl: string, env: Record<string, string> = {}, loggerFor?: LoggerFor) {
  const config = WebhooksConfig.parse({ NATS_URL: natsUrl, CJS_WEBHOOKS_ALLOW_PRIVATE_URLS: "true", ...env });
  return runService(natsUrl, "webhooks", buildWebhooks, config, systemClock, loggerFor);
}

/** Gateways, schedulers and node registries side by side on one NATS, plus a log relay and billing. */
export interface RunningSystem {
  gateways: RunningGateway[];
  schedulers: RunningService[];
  registries: RunningService[];
  logRelay: RunningService;
  billing: RunningService;
  webhooks: RunningService;
  stop(): Promise<void>;
}

/** How long replicas started together may take to share the partitions out. */
const SPREAD_TIMEOUT_MS = 30_000;

/**
 * Resolves once the scheduler replicas hold every partition in even shares, so a test does
 * not begin while partitions move from the first replica to the others (a list is refused then).
 */
async function partitionsSpread(schedulers: readonly RunningService[]): Promise<void> {
  const deadline = Date.now() + SPREAD_TIMEOUT_MS;
  for (;;) {
    const counts = schedulers.map(({ service }) => (service as Scheduler).ownedPartitions().size);
    const owned = counts.reduce((sum, count) => sum + count, 0);
    if (owned === JOB_PARTITIONS && Math.max(...counts) - Math.min(...counts) <= 1) return;
    if (Date.now() > deadline)
      throw new Error(`the scheduler replicas did not share the partitions out (owned: ${counts.join(", ")})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The topology's nats-server(s), and the system on them with its streams and buckets
 * replicated as the topology needs (`CJS_NATS_REPLICAS`) besides `env`. A system that
 * fails to start stops the servers it started on.
 */
export async function startSystemOn(
  topology: NatsTopology,
  replicas: { gateways: number; schedulers: number; registries: number },
  env: Record<string, string> = {},
): Promise<{ nats: RunningNats; system: RunningSystem }> {
  const nats = await topology.start();
  try {
    return {
      nats,
      system: await startSystem(nats.url, replicas, { CJS_NATS_REPLICAS: String(nats.replicas), ...env }),
    };
  } catch (error) {
    await nats.stop();
    throw error;
  }
}

export async function startSystem(
  natsUrl: string,
  replicas = { gateways: 2, schedulers: 2, registries: 2 },
  env: Record<string, string> = {},
  options: { schedulerClock?: Clock; loggerFor?: LoggerFor } = {},
): Promise<RunningSystem> {
  const { loggerFor } = options;
  const times = <T>(count: number, start: () => Promise<T>) => Promise.all(Array.from({ length: count }, start));
  const schedulers = await times(replicas.schedulers, () =>
    startScheduler(natsUrl, env, options.schedulerClock, loggerFor),
  );
  if (schedulers.length > 1) await partitionsSpread(schedulers);
  const registries = await times(replicas.registries, () => startNodeRegistry(natsUrl, env, loggerFor));
  const logRelay = await startLogRelay(natsUrl, env, loggerFor);
  const billing = await startBilling(natsUrl, env, loggerFor);
  const webhooks = await startWebhooks(natsUrl, env, loggerFor);
  const gateways = await times(replicas.gateways, () =>
    startGateway(natsUrl, env, loggerFor ? { logger: loggerFor("gateway") } : {}),
  );
  return {
    gateways,
    schedulers,
    registries,
    logRelay,
    billing,
    webhooks,
    async stop() {
      await Promise.all(gateways.map((gateway) => gateway.stop()));
      await Promise.all(
        [...schedulers, ...registries, logRelay, billing, webhooks].map((running) =>
          running.stop().catch(() => undefined),
        ),
      );
    },
  };
}
