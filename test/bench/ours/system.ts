import { setTimeout as sleep } from "node:timers/promises";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { httpNodePlane, natsLink, natsNodePlane, type NodePlane } from "../../../clients/agent/index.js";
import { pooledFetch } from "../../../clients/agent/pooled-fetch.js";
import type { ComputeClient } from "../../../shared/client/index.js";
import { loadClient } from "./load-client.js";
import { freePort } from "../../harness/free-port.js";
import { startNats, type NatsHarness } from "../../harness/nats-server.js";
import { startServiceProcess, type ServiceProcess } from "../../harness/service-process.js";
import { createTenant, signedInClient, type Tenant } from "../../harness/system.js";
import type { Cleanup } from "../cleanup.js";
import { findPidByCommandLine, type ProcessRef } from "../proc-stats.js";
import type { Progress } from "../progress.js";
import { startFakeAgent, type FakeAgent } from "./fake-agent.js";
import { startMonitoredNats } from "./monitored-nats.js";

/** The services, one process each, in the order they start. */
/** The webhooks service runs too, with no webhook: the cost of having it beside the job path. */
/** How much of a process's last output a failure's message carries. */
const DESCRIBE_OUTPUT_CHARS = 2_000;

export const SERVICES = ["scheduler", "node-registry", "log-relay", "billing", "webhooks", "gateway"] as const;
export type ServiceName = (typeof SERVICES)[number];

/**
 * The per-user limits on our side: one user here sends more in a second and a minute than
 * the defaults (50 and 1000) allow. The limiter still counts every request; it never refuses one. The load
 * generator is one address standing for many clients: the open loop at 1000/s holds more
 * than the default 256 connections per address open while answers queue.
 */
export const RAISED_RATE_LIMITS = {
  CJS_RATE_LIMIT_PER_SECOND: "1000000",
  CJS_RATE_LIMIT_PER_MINUTE: "10000000",
  CJS_RATE_LIMIT_PER_HOUR: "600000000",
  CJS_HTTP_MAX_CONNECTIONS_PER_IP: "100000",
} as const;
export const RAISED_RATE_LIMITS_NOTE =
  "our gateway runs with CJS_RATE_LIMIT_PER_SECOND=1000000, CJS_RATE_LIMIT_PER_MINUTE=10000000, CJS_RATE_LIMIT_PER_HOUR=600000000 and CJS_HTTP_MAX_CONNECTIONS_PER_IP=100000: one user here sends more than the default 50 a second and 1000 a minute, from one address (the limiter still counts every request)";

const READY_TIMEOUT_MS = 60_000;

export type NodeTransport = "nats" | "http";

export interface NodeFleetOptions {
  transport: NodeTransport;
  pool: string;
  nodes: number;
  slots: number;
  onStarted: (jobId: string, atMs: number) => void;
  onFinished: (jobId: string, atMs: number) => void;
  /** Whose nodes they are: the bench's tenant unless given (`addTenant`). */
  owner?: TenantKey;
}

/** An application and a user API key of one of its businesses' admins. */
export interface TenantKey {
  appId: string;
  apiKey: string;
}

/** A tenant the bench added besides its own: its key, and a client acting with it. */
export interface AddedTenant extends TenantKey {
  readonly user: ComputeClient;
}

export interface RegisteredNode {
  nodeId: string;
  /** Its node key: another client (a worker thread's) can act as this node with it. */
  apiKey: string;
  /** The node plane acting as this node. */
  plane: NodePlane;
  close(): Promise<void>;
}

export interface NodeFleet {
  agents: FakeAgent[];
  stop(): Promise<void>;
}

/** Our system as deployed: nats-server and each service in a process of its own; the bench is only a client. */
export interface OurSystem {
  readonly natsUrl: string;
  /** The first gateway's URL. */
  readonly gatewayUrl: string;
  /** Every gateway's URL, when several run (`replicas`). */
  readonly gatewayUrls: readonly string[];
  /** Each service process's ops server (`/metrics`, `/readyz`; the gateway's API), by its name in `processes`. */
  readonly opsUrls: ReadonlyMap<string, string>;
  /** What a service process (by its name in `opsUrls`) last wrote, and whether it still runs: for a failure's message. */
  describe(name: string): string;
  /** The tenant's admin (its user API key) through another gateway. */
  clientOf(gatewayUrl: string): ComputeClient;
  /** The bench's own NATS connection (operator commands, the bare publish server's stream). */
  readonly nc: NatsConnection;
  readonly tenant: Tenant;
  /** The tenant's admin, with a user API key (keys do not expire; a long run outlives an access token). */
  readonly user: ComputeClient;
  readonly userApiKey: string;
  /** nats-server and each service, by name, for CPU and memory readings. */
  readonly processes: ProcessRef[];
  /** nats-server's monitoring endpoint, when started with `monitor`. */
  readonly monitorUrl: string | undefined;
  /** The directory each profiled service writes its CPU profiles into when it stops (`cpuProfile`), by service. */
  readonly cpuProfiles: ReadonlyMap<ServiceName, string>;
  /** Adds an application with one business and its admin, and mints the admin a user API key. */
  addTenant(options: { operator: boolean }): Promise<AddedTenant>;
  /** Registers `nodes` fake agents in `pool` and starts their poll loops. */
  startNodes(options: NodeFleetOptions): Promise<NodeFleet>;
  /** Registers one node and hands its node plane to the caller, who drives it (no loop runs). */
  registerNode(transport: NodeTransport, pool: string, slots: number): Promise<RegisteredNode>;
  /** Stops every node fleet still running, the services, the connection and nats-server. Idempotent. */
  stop(): Promise<void>;
}

export interface OurSystemOptions {
  /** LOG_LEVEL of every service (`info`, their default, unless the bench is told otherwise). */
  logLevel: string;
  /** The gateway's per-user limits: raised (the default here, see RAISED_RATE_LIMITS) or the service's defaults. */
  rateLimits?: "raised" | "default";
  /** Opens nats-server's monitoring port (the message census reads /connz there). */
  monitor?: boolean;
  /** Processes of each service (default one each); several are named `scheduler 1`, `scheduler 2`, …. */
  replicas?: Partial<Record<ServiceName, number>>;
  /** Runs these services under `node --cpu-prof`, writing into `dir` when they stop (the first replica only). */
  cpuProfile?: { dir: string; services: readonly ServiceName[] };
  /** More settings of some services (a scenario's limits), by service. */
  env?: Partial<Record<ServiceName, Record<string, string>>>;
}

async function waitUntilReady(service: ServiceProcess, url: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (!service.alive()) throw new Error(`${service.name} exited while starting; its output:\n${service.output()}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await response.body?.cancel();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(
    `${service.name} was not ready (${url}) within ${READY_TIMEOUT_MS} ms; its output:\n${service.output()}`,
  );
}

/** Starts nats-server and the six services, waits until each answers /readyz, and signs a tenant in. */
export async function startOurSystem(
  cleanup: Cleanup,
  progress: Progress,
  options: OurSystemOptions,
): Promise<OurSystem> {
  progress.update("starting nats-server");
  const nats: Pick<NatsHarness, "url" | "storeDir" | "stop"> & { monitorUrl?: string } = options.monitor
    ? await startMonitoredNats()
    : await startNats();
  const stopNats = cleanup.add("nats-server", () => nats.stop());
  const children: ServiceProcess[] = [];
  const stopChildren = cleanup.add(
    "service processes",
    async () => void (await Promise.all(children.map((child) => child.stop()))),
  );
  const fleets = new Set<NodeFleet>();
  let nc: NatsConnection | undefined;
  const openNodes = new Set<RegisteredNode>();
  const stop = async (): Promise<void> => {
    await Promise.all([...fleets].map((fleet) => fleet.stop()));
    await Promise.all([...openNodes].map((node) => node.close()));
    await nc?.close().catch(() => undefined);
    await stopChildren();
    await stopNats();
  };
  try {
    const natsPid = nats.storeDir === undefined ? undefined : findPidByCommandLine(`${nats.storeDir}/nats-server.conf`);
    if (natsPid === undefined)
      throw new Error(
        "could not find the nats-server process (NATS_URL set? the bench needs a nats-server of its own to read its CPU time)",
      );

    progress.update(`starting ${SERVICES.join(", ")}`);
    const urls = new Map<ServiceProcess, string>();
    const names = new Map<ServiceProcess, string>();
    const gatewayUrls: string[] = [];
    const cpuProfiles = new Map<ServiceName, string>();
    const instances = SERVICES.flatMap((service) =>
      Array.from({ length: options.replicas?.[service] ?? 1 }, (_, index) => ({ service, index })),
    );
    for (const { service, index } of instances) {
      const port = await freePort();
      const env: Record<string, string> =
        service === "gateway"
          ? {
              CJS_HOST: "127.0.0.1",
              CJS_PORT: String(port),
              CJS_OPS_HOST: "127.0.0.1",
              CJS_OPS_PORT: "0",
              ...(options.rateLimits === "default" ? {} : RAISED_RATE_LIMITS),
            }
          : { CJS_OPS_HOST: "127.0.0.1", CJS_OPS_PORT: String(port) };
      const nodeArgs: string[] = [];
      if (options.cpuProfile?.services.includes(service) && index === 0) {
        // A directory each: Node writes one profile per thread (tsx's loader runs in a thread of its own).
        const dir = `${options.cpuProfile.dir}/${service}-${Date.now()}`;
        cpuProfiles.set(service, dir);
        nodeArgs.push("--cpu-prof", `--cpu-prof-dir=${dir}`);
      }
      const child = startServiceProcess({
        service,
        nodeArgs,
        env: { NATS_URL: nats.url, LOG_LEVEL: options.logLevel, ...env, ...options.env?.[service] },
      });
      children.push(child);
      // A service with replicas names each: `scheduler 1`, `scheduler 2`, ….
      names.set(child, (options.replicas?.[service] ?? 1) > 1 ? `${service} ${index + 1}` : service);
      urls.set(child, `http://127.0.0.1:${port}`);
      if (service === "gateway") gatewayUrls.push(`http://127.0.0.1:${port}`);
    }
    await Promise.all(children.map((child) => waitUntilReady(child, `${urls.get(child)}/readyz`)));
    const gatewayUrl = gatewayUrls[0]!;

    progress.update("signing a tenant in");
    nc = await connect({ servers: nats.url, name: "bench" });
    const tenant = await createTenant(nc);
    const { client } = await signedInClient(gatewayUrl, tenant);
    const userApiKey = (await client.call("createApiKey", { name: "bench" })).key;
    const user = loadClient({ baseUrl: gatewayUrl, appId: tenant.app.app_id, apiKey: userApiKey });
    const processes: ProcessRef[] = [
      { name: "nats-server", pid: natsPid },
      ...children.map((child) => ({ name: names.get(child) ?? child.name, pid: child.pid })),
    ];

    const ownKey: TenantKey = { appId: tenant.app.app_id, apiKey: userApiKey };
    const registerNode = async (
      kind: NodeTransport,
      pool: string,
      slots: number,
      name: string,
      owner = ownKey,
    ): Promise<RegisteredNode & { heartbeatIntervalSeconds: number }> => {
      // Each node its own connection (NATS) or connection pool (HTTP), as each agent has.
      const transport = nodeTransport(kind, nats.url, gatewayUrl, owner.appId, name);
      try {
        const registered = await transport.plane.register(
          {
            name,
            hostname: "bench.local",
            pool_id: pool,
            labels: {},
            capacity: { cpu: slots, memory_mb: slots * 1024, gpu: 0, slots },
            job_types: ["shell"],
            agent_version: "bench",
          },
          owner.apiKey,
        );
        const node = {
          nodeId: registered.node_id,
          apiKey: registered.api_key,
          plane: transport.plane.withNodeKey(registered.api_key),
          heartbeatIntervalSeconds: registered.heartbeat_interval_seconds,
          close: async () => {
            openNodes.delete(node);
            await transport.close();
          },
        };
        openNodes.add(node);
        return node;
      } catch (error) {
        await transport.close();
        throw error;
      }
    };

    const startNodes = async (fleet: NodeFleetOptions): Promise<NodeFleet> => {
      const agents: FakeAgent[] = [];
      const nodes: RegisteredNode[] = [];
      let stopped: Promise<void> | undefined;
      const handle: NodeFleet = {
        agents,
        stop: () =>
          (stopped ??= (async () => {
            fleets.delete(handle);
            await Promise.all(agents.map((agent) => agent.stop()));
            await Promise.all(nodes.map((node) => node.close()));
          })()),
      };
      fleets.add(handle);
      try {
        for (let index = 0; index < fleet.nodes; index++) {
          const node = await registerNode(
            fleet.transport,
            fleet.pool,
            fleet.slots,
            `bench-${fleet.pool}-${index}`,
            fleet.owner,
          );
          nodes.push(node);
          agents.push(
            startFakeAgent({
              plane: node.plane,
              nodeId: node.nodeId,
              slots: fleet.slots,
              heartbeatIntervalSeconds: node.heartbeatIntervalSeconds,
              onStarted: fleet.onStarted,
              onFinished: fleet.onFinished,
            }),
          );
        }
      } catch (error) {
        await handle.stop();
        throw error;
      }
      return handle;
    };

    const addTenant = async ({ operator }: { operator: boolean }): Promise<AddedTenant> => {
      const added = await createTenant(nc!, { operator });
      const { client: signedIn } = await signedInClient(gatewayUrl, added);
      const apiKey = (await signedIn.call("createApiKey", { name: "bench" })).key;
      return {
        appId: added.app.app_id,
        apiKey,
        user: loadClient({ baseUrl: gatewayUrl, appId: added.app.app_id, apiKey }),
      };
    };

    let registered = 0;
    return {
      natsUrl: nats.url,
      gatewayUrl,
      gatewayUrls,
      opsUrls: new Map(children.map((child) => [names.get(child) ?? child.name, urls.get(child)!])),
      describe: (name) => {
        const child = children.find((candidate) => (names.get(candidate) ?? candidate.name) === name);
        if (!child) return `${name}: no such process`;
        return `${name} (${child.alive() ? "running" : "exited"}), its last output:\n${child.output().slice(-DESCRIBE_OUTPUT_CHARS)}`;
      },
      clientOf: (url: string) => loadClient({ baseUrl: url, appId: tenant.app.app_id, apiKey: userApiKey }),
      nc,
      tenant,
      user,
      userApiKey,
      processes,
      monitorUrl: nats.monitorUrl,
      cpuProfiles,
      addTenant,
      startNodes,
      registerNode: (kind, pool, slots) => registerNode(kind, pool, slots, `bench-${pool}-${registered++}`),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

interface NodeTransportHandle {
  plane: NodePlane;
  close(): Promise<void>;
}

/** The agent's own transports (clients/agent/transport.ts): a NATS connection (NATS-direct), or its pooled HTTP client. */
function nodeTransport(
  kind: NodeTransport,
  natsUrl: string,
  gatewayUrl: string,
  appId: string,
  name: string,
): NodeTransportHandle {
  if (kind === "nats") {
    const link = natsLink({ url: natsUrl, credentials: {}, inboxPrefix: "_INBOX", name: `cjs-agent ${name}` });
    return { plane: natsNodePlane({ link, appId }), close: () => link.close() };
  }
  const pool = pooledFetch();
  return { plane: httpNodePlane({ gatewayUrl, appId, fetch: pool.fetch }), close: async () => pool.close() };
}
