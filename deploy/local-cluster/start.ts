/**
 * Starting the cluster: NATS, then the services, the load balancer, the app and admin
 * (the operator commands `make dev` sends), then the agents. Each step waits for the
 * previous one to be ready; a step that fails stops everything started so far.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { connectNats } from "../../shared/nats/index.js";
import { createLogger } from "../../shared/runtime/index.js";
import { bootstrapDev, type DevLogin } from "../../services/dev/bootstrap.js";
import { portIsFree } from "../../services/dev/embedded-nats.js";
import { mintAgentKey, readAgentKeyFile } from "../../services/dev/local-agent.js";
import { identityOf, spawnDetached, terminate } from "./daemon.js";
import {
  AGENTS,
  allProcesses,
  type AgentCredentials,
  type ClusterLayout,
  clusterLayout,
  type ClusterSettings,
  NATS_NODES,
  type ProcessSpec,
  REPLICAS,
  SERVICES,
} from "./layout.js";
import { logSize, waitReady } from "./readiness.js";
import { type ClusterState, type ProcessRecord, writeState } from "./state.js";

const NATS_READY_MS = 60_000;
/** Ten services boot at once on a small machine: generous. */
const SERVICES_READY_MS = 240_000;
const LB_READY_MS = 30_000;
const AGENT_READY_MS = 60_000;
const STOP_GRACE_MS = 15_000;
const APP_ID = "local";
const ADMIN_EMAIL = "admin@localhost";

type Env = Record<string, string | undefined>;

/** Starts `specs` together, records them in `started` (then calls `persist`), and waits until each is ready. */
async function launch(
  specs: readonly ProcessSpec[],
  env: Env,
  timeoutMs: number,
  started: ProcessRecord[],
  persist: () => void,
  say: (line: string) => void,
): Promise<void> {
  const launched = specs.map((spec) => {
    const logOffset = logSize(spec.log);
    const record: ProcessRecord = { ...spec, pid: spawnDetached(spec, env) };
    started.push(record);
    return { record, logOffset };
  });
  persist();
  await Promise.all(
    launched.map(({ record, logOffset }) =>
      waitReady({ ...record, identity: identityOf(record), logOffset }, timeoutMs),
    ),
  );
  say(`  ready: ${specs.map((spec) => spec.name).join(", ")}`);
}

async function assertPortsFree(layout: ClusterLayout): Promise<void> {
  for (const spec of allProcesses(layout)) {
    for (const port of spec.ports) {
      if (!(await portIsFree("127.0.0.1", port))) {
        throw new Error(
          `port ${port} (${spec.name}) is taken; choose another base port with CLUSTER_BASE_PORT (ports base to base+99 are used)`,
        );
      }
    }
  }
}

async function bootstrap(
  layout: ClusterLayout,
  dir: string,
): Promise<{ login: DevLogin; credentials: AgentCredentials[] }> {
  const logger = createLogger({ service: "local-cluster", level: "warn" });
  const nc = await connectNats({ url: layout.natsUrls.join(","), name: "cjs-local-cluster", logger });
  try {
    const login = await bootstrapDev(nc, { dataDir: dir, appId: APP_ID, email: ADMIN_EMAIL, password: undefined });
    const credentials: AgentCredentials[] = [];
    for (const agent of layout.agents) {
      const keyPath = join(dir, "agents", `${agent.name}.key.json`);
      mkdirSync(join(dir, "agents"), { recursive: true });
      const saved = await readAgentKeyFile(keyPath);
      const apiKey =
        saved?.key ??
        (await mintAgentKey({ gatewayUrl: layout.lbUrl, nc, login }, keyPath, `local cluster ${agent.name}`));
      credentials.push({ appId: login.appId, apiKey });
    }
    return { login, credentials };
  } finally {
    await nc.close();
  }
}

/** Starts everything and records it in the state dir; on failure stops what it started and rethrows. */
export async function startCluster(
  settings: ClusterSettings,
  env: Env,
  say: (line: string) => void,
): Promise<ClusterState> {
  mkdirSync(settings.dir, { recursive: true });
  const bare = clusterLayout(settings);
  await assertPortsFree(bare);
  const started: ProcessRecord[] = [];
  // Recorded as soon as spawned, so `make cluster-stop` finds what an interrupted start left running.
  const pending: ClusterState = {
    started_at: "",
    lb_url: bare.lbUrl,
    nats_urls: bare.natsUrls,
    app_id: "",
    business_id: "",
    email: "",
    password: "",
    processes: started,
  };
  const step = (specs: readonly ProcessSpec[], timeoutMs: number) =>
    launch(specs, env, timeoutMs, started, () => writeState(settings.dir, pending), say);
  try {
    say(`starting ${NATS_NODES} nats-servers (sync_interval: always) on ${bare.natsUrls.join(", ")}`);
    await step(bare.nats, NATS_READY_MS);
    say(
      `starting ${bare.services.length} service processes (${SERVICES.length} services × ${REPLICAS} replicas); the first start compiles TypeScript and may take a minute`,
    );
    await step(bare.services, SERVICES_READY_MS);
    say(`starting the load balancer (haproxy) on ${bare.lbUrl}`);
    await step([bare.lb], LB_READY_MS);
    const { login, credentials } = await bootstrap(bare, settings.dir);
    const layout = clusterLayout(settings, credentials);
    say(`starting ${AGENTS} agents (operator pool default)`);
    await step(layout.agents, AGENT_READY_MS);
    const state: ClusterState = {
      started_at: new Date().toISOString(),
      lb_url: layout.lbUrl,
      nats_urls: layout.natsUrls,
      app_id: login.appId,
      business_id: login.businessId,
      email: login.email,
      password: login.password,
      processes: started,
    };
    writeState(settings.dir, state);
    return state;
  } catch (error) {
    say("start failed; stopping what was started");
    await terminate(
      [...started].reverse().map((record) => ({ pid: record.pid, identity: identityOf(record) })),
      STOP_GRACE_MS,
    );
    throw error;
  }
}
