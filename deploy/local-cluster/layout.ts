/**
 * What `make cluster` runs, as data: every process with its command, environment, ports,
 * log file and readiness probe. Pure, so the generated settings are tested without
 * starting anything; `start.ts` acts on it.
 */
import { join } from "node:path";
import { LOCAL_STREAM_SIZES } from "../../services/dev/config.js";
import { serverConfig } from "../../shared/nats-server/index.js";
import { nodeFlagsOf } from "../../shared/runtime/index.js";
import { haproxyConfig } from "./haproxy-config.js";

export const SERVICES = ["gateway", "scheduler", "node-registry", "log-relay", "billing", "webhooks"] as const;
export type ServiceName = (typeof SERVICES)[number];
export const REPLICAS = 2;
export const NATS_NODES = 3;
export const AGENTS = 2;
/** Slots per agent: enough for the soak's short jobs, light on a small machine. */
export const AGENT_SLOTS = 4;
const HOST = "127.0.0.1";
const CLUSTER_NAME = "cjs-local";
/** The environment variable that marks a process as ours (`<state dir>#<name>`), so a recorded pid is only signalled while it is still that process. */
export const IDENTITY_VARIABLE = "LOCAL_CLUSTER_PROCESS";

/** Port offsets from the base port; each block leaves room for more replicas. */
const OFFSET = {
  lb: 0,
  natsClient: 10,
  natsRoute: 20,
  gatewayApi: 30,
  gatewayOps: 40,
  scheduler: 50,
  "node-registry": 60,
  "log-relay": 70,
  billing: 80,
  webhooks: 90,
} as const;
/** The highest offset in use, plus one: a base port must leave this many ports above it. */
export const PORT_SPAN = 100;

export type ProcessKind = "nats" | "service" | "lb" | "agent";

/** How to tell a started process is ready: an HTTP 200, JetStream answering, or a log line (the agent has no port). */
export type ReadyProbe =
  | { kind: "http"; url: string }
  | { kind: "jetstream"; url: string }
  | { kind: "log"; message: string };

export interface ProcessSpec {
  /** Unique in the cluster: `nats-1`, `gateway-2`, `agent-1`, `lb`. */
  name: string;
  kind: ProcessKind;
  command: string;
  args: string[];
  /** Set on top of the launcher's own environment. */
  env: Record<string, string>;
  /** stdout and stderr are appended here. */
  log: string;
  /** Loopback ports it listens on (checked free before a start). */
  ports: number[];
  ready: ReadyProbe;
  /** Written before the process starts (its config). */
  files: { path: string; text: string }[];
}

export interface ClusterSettings {
  /** Absolute state directory: stores, logs, pids, the login. */
  dir: string;
  basePort: number;
  /** Absolute repository root: services run from here. */
  root: string;
  natsServer: string;
  haproxy: string;
  /** The node binary that runs the services and agents. */
  node: string;
}

export interface AgentCredentials {
  appId: string;
  apiKey: string;
}

export interface ClusterLayout {
  lbUrl: string;
  natsUrls: string[];
  nats: ProcessSpec[];
  services: ProcessSpec[];
  lb: ProcessSpec;
  agents: ProcessSpec[];
}

const range = (count: number) => Array.from({ length: count }, (_, index) => index);

function logFile(settings: ClusterSettings, name: string): string {
  return join(settings.dir, "logs", `${name}.log`);
}

function natsSpec(settings: ClusterSettings, index: number): ProcessSpec {
  const name = `nats-${index + 1}`;
  const port = settings.basePort + OFFSET.natsClient + index;
  const routePort = settings.basePort + OFFSET.natsRoute + index;
  const storeDir = join(settings.dir, "nats", `n${index + 1}`);
  const configPath = join(storeDir, "nats-server.conf");
  const text = serverConfig({
    binary: settings.natsServer,
    host: HOST,
    port,
    storeDir,
    serverName: `n${index + 1}`,
    // Every write is on disk before it is acknowledged, so a kill -9 loses nothing a client was told is stored.
    syncInterval: "always",
    cluster: {
      name: CLUSTER_NAME,
      port: routePort,
      routes: range(NATS_NODES)
        .filter((other) => other !== index)
        .map((other) => `nats-route://${HOST}:${settings.basePort + OFFSET.natsRoute + other}`),
    },
  });
  const url = `nats://${HOST}:${port}`;
  return {
    name,
    kind: "nats",
    command: settings.natsServer,
    args: ["-c", configPath],
    env: { [IDENTITY_VARIABLE]: `${settings.dir}#${name}` },
    log: logFile(settings, name),
    ports: [port, routePort],
    ready: { kind: "jetstream", url },
    files: [{ path: configPath, text }],
  };
}

function servicePorts(settings: ClusterSettings, service: ServiceName, index: number): { api?: number; ops: number } {
  if (service === "gateway")
    return { api: settings.basePort + OFFSET.gatewayApi + index, ops: settings.basePort + OFFSET.gatewayOps + index };
  return { ops: settings.basePort + OFFSET[service] + index };
}

function serviceSpec(settings: ClusterSettings, natsUrl: string, service: ServiceName, index: number): ProcessSpec {
  const name = `${service}-${index + 1}`;
  const { api, ops } = servicePorts(settings, service, index);
  const env: Record<string, string> = {
    ...LOCAL_STREAM_SIZES,
    NATS_URL: natsUrl,
    CJS_NATS_REPLICAS: String(NATS_NODES),
    CJS_OPS_HOST: HOST,
    CJS_OPS_PORT: String(ops),
    // Readiness follows a lost stream leader within a second rather than five, so a fault's recovery is measured finely.
    CJS_JETSTREAM_PROBE_INTERVAL_MS: "1000",
    LOG_LEVEL: "info",
    [IDENTITY_VARIABLE]: `${settings.dir}#${name}`,
  };
  // Every connection to a gateway is the load balancer's: it keeps the per-address budget (haproxy-config.ts).
  if (api !== undefined)
    Object.assign(env, {
      CJS_HOST: HOST,
      CJS_PORT: String(api),
      CJS_DEV_OUTBOX: "true",
      CJS_HTTP_MAX_CONNECTIONS_PER_IP: "0",
    });
  return {
    name,
    kind: "service",
    command: settings.node,
    args: [...nodeFlagsOf(service), "--import", "tsx", join(settings.root, "services", service, "main.ts")],
    env,
    log: logFile(settings, name),
    ports: api === undefined ? [ops] : [api, ops],
    // The gateway answers /readyz on its API port, as the load balancer sees it.
    ready: { kind: "http", url: `http://${HOST}:${api ?? ops}/readyz` },
    files: [],
  };
}

function lbSpec(settings: ClusterSettings, gateways: readonly ProcessSpec[]): ProcessSpec {
  const port = settings.basePort + OFFSET.lb;
  const configPath = join(settings.dir, "haproxy.cfg");
  const text = haproxyConfig({
    host: HOST,
    port,
    gateways: gateways.map((gateway) => ({ name: gateway.name, host: HOST, port: gateway.ports[0]! })),
  });
  return {
    name: "lb",
    kind: "lb",
    command: settings.haproxy,
    // -db: stay in the foreground, so the recorded pid is haproxy's and its log goes to our file.
    args: ["-db", "-f", configPath],
    env: { [IDENTITY_VARIABLE]: `${settings.dir}#lb` },
    log: logFile(settings, "lb"),
    ports: [port],
    ready: { kind: "http", url: `http://${HOST}:${port}/readyz` },
    files: [{ path: configPath, text }],
  };
}

function agentSpec(
  settings: ClusterSettings,
  lbUrl: string,
  index: number,
  credentials: AgentCredentials | undefined,
): ProcessSpec {
  const name = `agent-${index + 1}`;
  return {
    name,
    kind: "agent",
    command: settings.node,
    args: ["--import", "tsx", join(settings.root, "clients", "agent", "main.ts")],
    env: {
      CJS_GATEWAY_URL: lbUrl,
      ...(credentials ? { CJS_APP_ID: credentials.appId, CJS_API_KEY: credentials.apiKey } : {}),
      CJS_POOL: "default",
      CJS_SLOTS: String(AGENT_SLOTS),
      CJS_WORK_DIR: join(settings.dir, "agents", name),
      CJS_NODE_NAME: `local cluster ${name}`,
      LOG_LEVEL: "info",
      [IDENTITY_VARIABLE]: `${settings.dir}#${name}`,
    },
    log: logFile(settings, name),
    ports: [],
    ready: { kind: "log", message: "agent running" },
    files: [],
  };
}

/** The whole cluster; agents carry `credentials` when given (needed only until their node is registered). */
export function clusterLayout(settings: ClusterSettings, credentials?: readonly AgentCredentials[]): ClusterLayout {
  if (!Number.isInteger(settings.basePort) || settings.basePort < 1024 || settings.basePort + PORT_SPAN > 65535) {
    throw new Error(`base port ${settings.basePort} must be an integer from 1024 to ${65535 - PORT_SPAN}`);
  }
  const nats = range(NATS_NODES).map((index) => natsSpec(settings, index));
  const natsUrls = nats.map((spec) => (spec.ready as { url: string }).url);
  const natsUrl = natsUrls.join(",");
  const services = SERVICES.flatMap((service) =>
    range(REPLICAS).map((index) => serviceSpec(settings, natsUrl, service, index)),
  );
  const lb = lbSpec(
    settings,
    services.filter((spec) => spec.name.startsWith("gateway-")),
  );
  const lbUrl = `http://${HOST}:${lb.ports[0]}`;
  const agents = range(AGENTS).map((index) => agentSpec(settings, lbUrl, index, credentials?.[index]));
  return { lbUrl, natsUrls, nats, services, lb, agents };
}

/** Every process in start order: NATS, the services, the load balancer, the agents. */
export function allProcesses(layout: ClusterLayout): ProcessSpec[] {
  return [...layout.nats, ...layout.services, layout.lb, ...layout.agents];
}
