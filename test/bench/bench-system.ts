import type { NatsConnection } from "@nats-io/transport-node";
import { ComputeClient } from "../../shared/client/index.js";
import { User } from "../../shared/contract/index.js";
import { requestRpc, subjects } from "../../shared/nats/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";
import type { Cleanup } from "./cleanup.js";
import type { Progress } from "./progress.js";

/**
 * The per-user limits of the scenarios that are not about the limiter: one user there
 * sends more in a minute than the default 1000 allows. The limiter still counts every
 * request; it just never refuses one.
 */
export const RAISED_RATE_LIMITS = { CJS_RATE_LIMIT_PER_MINUTE: "10000000", CJS_RATE_LIMIT_PER_HOUR: "600000000" } as const;

export const RAISED_RATE_LIMITS_NOTE = "CJS_RATE_LIMIT_PER_MINUTE=10000000 and CJS_RATE_LIMIT_PER_HOUR=600000000 (the defaults would throttle one user here; the limiter still counts every request)";

/** A whole system on a nats-server of its own (or the shared `NATS_URL`), with one tenant signed in. */
export interface BenchSystem {
  nats: NatsHarness;
  system: RunningSystem;
  tenant: Tenant;
  /** The tenant's admin, signed in, one client per gateway replica (same access token). */
  users: ComputeClient[];
  /** Stops the system and its nats-server (idempotent). */
  stop(): Promise<void>;
}

export interface BenchSystemOptions {
  /** Service settings on top of the harness's, for every service. */
  env: Record<string, string>;
  replicas?: { gateways: number; schedulers: number; registries: number };
}

/**
 * A fresh nats-server per scenario keeps one scenario's leftovers (queued jobs, log
 * streams) out of the next one's numbers. With `NATS_URL`, every scenario shares that server.
 */
export async function startBenchSystem(cleanup: Cleanup, progress: Progress, options: BenchSystemOptions): Promise<BenchSystem> {
  progress.update("starting nats-server");
  const nats = await startNats();
  const stopNats = cleanup.add("nats-server", () => nats.stop());
  progress.update("starting services");
  let system: RunningSystem;
  try {
    system = await startSystem(nats.url, options.replicas ?? { gateways: 2, schedulers: 2, registries: 2 }, options.env);
  } catch (error) {
    await stopNats();
    throw error;
  }
  const stopSystem = cleanup.add("services", () => system.stop());
  const stop = async (): Promise<void> => {
    await stopSystem();
    await stopNats();
  };
  try {
    const tenant = await createTenant(system.gateways[0]!.nc);
    const { tokens } = await signedInClient(system.gateways[0]!.baseUrl, tenant);
    const users = system.gateways.map(({ baseUrl }) => new ComputeClient({ baseUrl, appId: tenant.app.app_id, accessToken: tokens.access_token }));
    return { nats, system, tenant, users, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Another member of the tenant's business, made with the operator command, as `createTenant` makes the first. */
export async function createUser(nc: NatsConnection, tenant: Tenant): Promise<Tenant> {
  const password = `pw-${randomBase62(20)}`;
  const user = await requestRpc(
    nc,
    subjects.adminUserCreate(),
    { app_id: tenant.app.app_id, business_id: tenant.business.business_id, email: `bench-${randomBase62(10).toLowerCase()}@example.test`, password, role: "admin" },
    User,
  );
  return { ...tenant, user, password };
}
