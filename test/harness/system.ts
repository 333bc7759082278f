import { connect, type NatsConnection } from "@nats-io/transport-node";
import { pino } from "pino";
import { ComputeClient } from "../../shared/client/index.js";
import { App, Business, User } from "../../shared/contract/index.js";
import { requestRpc, subjects } from "../../shared/nats/index.js";
import { collectProcessMetrics, randomBase62, systemClock } from "../../shared/runtime/index.js";
import { GatewayConfig } from "../../services/gateway/config.js";
import { buildGateway, type Gateway } from "../../services/gateway/gateway.js";

/** A gateway replica listening on a free port, on its own NATS connection. */
export interface RunningGateway {
  gateway: Gateway;
  nc: NatsConnection;
  baseUrl: string;
  /** One-time codes this replica "sent", newest last, by e-mail. */
  outbox: Map<string, string[]>;
  stop(): Promise<void>;
}

export async function startGateway(natsUrl: string, env: Record<string, string> = {}): Promise<RunningGateway> {
  collectProcessMetrics();
  const config = GatewayConfig.parse({ NATS_URL: natsUrl, CJS_HOST: "127.0.0.1", CJS_PORT: "0", ...env });
  const nc = await connect({ servers: natsUrl, name: "test-gateway" });
  const outbox = new Map<string, string[]>();
  const gateway = await buildGateway({
    nc,
    config,
    clock: systemClock,
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
    sendOtp: async (to, code) => void outbox.set(to, [...(outbox.get(to) ?? []), code]),
  });
  await gateway.start();
  const baseUrl = await gateway.app.listen({ host: "127.0.0.1", port: 0 });
  return {
    gateway,
    nc,
    baseUrl,
    outbox,
    async stop() {
      await gateway.stop();
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

export async function createTenant(nc: NatsConnection, options: { role?: "admin" | "member"; appId?: string } = {}): Promise<Tenant> {
  const appId = options.appId ?? `t-${randomBase62(10).toLowerCase()}`;
  const existing = options.appId !== undefined;
  const app = existing
    ? { app_id: appId, name: appId, created_at: new Date().toISOString() }
    : await requestRpc(nc, subjects.adminAppCreate(), { id: appId, name: `Test ${appId}` }, App);
  const business = await requestRpc(nc, subjects.adminBusinessCreate(), { app_id: appId, name: "Test business" }, Business);
  const password = `pw-${randomBase62(20)}`;
  const user = await requestRpc(
    nc,
    subjects.adminUserCreate(),
    { app_id: appId, business_id: business.business_id, email: `user-${randomBase62(8).toLowerCase()}@example.test`, password, role: options.role ?? "admin" },
    User,
  );
  return { app, business, user, password };
}

/** Signs the tenant's user in and returns a client carrying the access token, plus the token pair. */
export async function signedInClient(baseUrl: string, tenant: Tenant) {
  const anonymous = new ComputeClient({ baseUrl, appId: tenant.app.app_id });
  const tokens = await anonymous.call("login", { email: tenant.user.email, password: tenant.password });
  return { client: anonymous.with({ accessToken: tokens.access_token }), anonymous, tokens };
}
