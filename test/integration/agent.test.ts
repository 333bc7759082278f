import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { jetstreamManager } from "@nats-io/jetstream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Agent,
  buildAgent,
  loadConfig as loadAgentConfig,
  processGroupMembers,
} from "../../clients/agent/index.js";
import type { ComputeClient } from "../harness/client.js";
import { type JobState, LogLine } from "../../shared/contract/index.js";
import { decodeJson, STREAMS, subjects } from "../../shared/nats/index.js";
import { LogMessage } from "../../shared/records/index.js";
import { systemClock } from "../../shared/runtime/index.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";
import { programArgs } from "../harness/programs.js";

/**
 * The agent against the whole system, over each transport: the gateway's HTTP API, and
 * NATS-direct (the gateway's NATS listener). Jobs really run as processes on this machine.
 * Heartbeats every second, so a cancel or timeout reaches the agent at once; a node is
 * lost only after ten silent seconds, longer than an agent restart takes.
 */
const TRANSPORTS = ["http", "nats"] as const;
type Transport = (typeof TRANSPORTS)[number];
const ENV = { CJS_HEARTBEAT_INTERVAL_SECONDS: "1", CJS_HEARTBEAT_MISSES_OFFLINE: "10" };
/** A closed port: nothing answers there. */
const UNREACHABLE_URL = "http://127.0.0.1:9";
const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let user: ComputeClient;
let apiKey: string;
let baseUrl: string;
const workDirs: string[] = [];
const agents: Agent[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 }, ENV);
  baseUrl = system.gateways[0]!.baseUrl;
  tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(baseUrl, tenant));
  apiKey = (await user.call("createApiKey", { name: "agent tests" })).key;
});

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await Promise.all(agents.map((agent) => agent.stop()));
  await system?.stop();
  await nats?.stop();
  await Promise.all(workDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function newWorkDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "cjs-agent-test-"));
  workDirs.push(dir);
  return dir;
}

/**
 * The settings of a test agent in `pool`, as environment variables: over HTTP to the
 * gateway, or over NATS; `via` replaces the gateway's or the NATS server's address.
 */
function agentEnv(transport: Transport, pool: string, workDir: string, via?: string): Record<string, string> {
  return {
    // Over NATS the gateway URL points nowhere: a call that went over HTTP would fail.
    ...(transport === "http"
      ? { CJS_GATEWAY_URL: via ?? baseUrl }
      : { CJS_AGENT_NATS_URL: via ?? nats.url, CJS_GATEWAY_URL: UNREACHABLE_URL }),
    CJS_APP_ID: tenant.app.app_id,
    CJS_API_KEY: apiKey,
    CJS_POOL: pool,
    CJS_SLOTS: "4",
    CJS_WORK_DIR: workDir,
    CJS_KILL_GRACE_MS: "2000",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
  };
}

/** An agent in this process, as `make dev` runs it. */
async function startAgent(env: Record<string, string>): Promise<Agent> {
  const agent = buildAgent({
    config: loadAgentConfig(env),
    logger: pino({ level: env.LOG_LEVEL ?? "silent" }),
    clock: systemClock,
    env: process.env,
  });
  agents.push(agent);
  await agent.start();
  return agent;
}

async function submit(pool: string, command: string[], extra: { timeout_seconds?: number } = {}): Promise<string> {
  return (await user.call("submitJob", { type: "shell", command, pool_id: pool, max_attempts: 1, ...extra })).job_id;
}

async function job(jobId: string) {
  return (await user.call("retrieveJob", { job_id: jobId })).job;
}

async function waitForState(jobId: string, state: JobState, timeout = 20_000): Promise<void> {
  await expect.poll(async () => (await job(jobId)).state, { timeout, interval: 100 }).toBe(state);
}

/** Every line stored for the job's first attempt, read straight from the log stream (nats-server 2.9 has no multi-filter consumers). */
async function storedLines(jobId: string): Promise<LogLine[]> {
  const jsm = await jetstreamManager(system.gateways[0]!.nc);
  const lines: LogLine[] = [];
  for (let seq = 1; ; ) {
    const message = await jsm.direct
      .getMessage(STREAMS.logs, { seq, next_by_subj: subjects.jobLogs(jobId, 1) })
      .catch(() => null);
    if (!message) return lines;
    lines.push(...LogMessage.parse(decodeJson(message.data)).lines);
    seq = message.seq + 1;
  }
}

function workspaceOf(workDir: string, jobId: string): string {
  return join(workDir, "jobs", `${jobId}-1`);
}

/** Live (not zombie) processes of a group; without /proc, whether signal 0 still reaches it. */
async function liveProcesses(pgid: number): Promise<number> {
  const members = await processGroupMembers(pgid);
  if (members !== null) return members.length;
  try {
    process.kill(-pgid, 0);
    return 1;
  } catch {
    return 0;
  }
}

/** The process group a job wrote to `pgid` in its workspace (its shell's `$$`). */
async function recordedGroup(workDir: string, jobId: string): Promise<number> {
  const path = join(workspaceOf(workDir, jobId), "pgid");
  await expect
    .poll(async () => (await readFile(path, "utf8").catch(() => "")).trim(), { timeout: 20_000 })
    .toMatch(/^\d+$/);
  return Number((await readFile(path, "utf8")).trim());
}

/** A job that records its process group, then waits on two children: a tree to stop. */
const TREE = ["sh", "-c", "echo $$ > pgid; sleep 300 & sleep 300 & wait"];

/**
 * A TCP proxy in front of the gateway (HTTP) or the NATS server (NATS-direct) that the test
 * can cut: while cut, every connection is dropped, as when the server is down.
 */
async function startProxy(
  transport: Transport,
): Promise<{ url: string; cut(): void; restore(): void; refused(): number; close(): Promise<void> }> {
  const target = new URL(transport === "http" ? baseUrl : nats.url);
  let isCut = false;
  let refusedConnections = 0;
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (isCut) {
      refusedConnections += 1;
      return void client.destroy();
    }
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on("error", () => undefined);
      socket.on("close", () => open.delete(socket));
    }
    client.pipe(upstream).pipe(client);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `${target.protocol}//127.0.0.1:${port}`,
    cut() {
      isCut = true;
      for (const socket of open) socket.destroy();
    },
    restore() {
      isCut = false;
    },
    /** Connections refused while cut: the agent's attempts to get back. */
    refused: () => refusedConnections,
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** `cjs-agent` as its own process, as a customer runs it. */
function spawnAgent(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, programArgs("clients/agent/main.ts"), {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", process.env.TEST_LOG_LEVEL ? "inherit" : "ignore", "inherit"],
  });
  children.push(child);
  return child;
}

describe.each(TRANSPORTS)("over %s", (transport) => {
  describe("the agent runs jobs", () => {
    const pool = `agent-main-${transport}`;
    let workDir: string;

    beforeAll(async () => {
      workDir = await newWorkDir();
      await startAgent(agentEnv(transport, pool, workDir));
    });

    it("a job that prints to both streams and exits non-zero ends failed with its exit code, and both lines are stored", async () => {
      const jobId = await submit(pool, ["sh", "-c", "echo out; echo err >&2; exit 3"]);
      await waitForState(jobId, "failed");
      const ended = await job(jobId);
      expect(ended).toMatchObject({ exit_code: 3, error: { code: "job.exit_nonzero" } });
      expect(ended.usage?.wall_seconds).toBeGreaterThan(0);

      const lines = await storedLines(jobId);
      expect(lines.map(({ seq, stream, line }) => ({ seq, stream, line })).sort((a, b) => a.seq - b.seq)).toEqual(
        expect.arrayContaining([
          { seq: expect.any(Number), stream: "stdout", line: "out" },
          { seq: expect.any(Number), stream: "stderr", line: "err" },
        ]),
      );
      expect(lines.map((line) => line.seq).sort()).toEqual([1, 2]);
    });

    it("a job gets its env and the agent's variables, runs in a fresh workspace, and succeeds with exit code 0", async () => {
      const jobId = (
        await user.call("submitJob", {
          type: "shell",
          command: [
            "sh",
            "-c",
            'echo "$GREETING $CJS_JOB_ID $CJS_ATTEMPT"; ls -A | grep -v "^.cjs" | wc -l; test -d "$CJS_ARTIFACTS_DIR"',
          ],
          env: { GREETING: "hello" },
          pool_id: pool,
        })
      ).job_id;
      await waitForState(jobId, "succeeded");
      expect((await job(jobId)).exit_code).toBe(0);
      // The workspace held only artifacts/ when the command started.
      expect((await storedLines(jobId)).map((line) => line.line.trim())).toEqual([`hello ${jobId} 1`, "1"]);
    });

    it("reports the run's usage: wall time, and CPU time and peak memory where /proc exists", async () => {
      // Busy for two seconds: several 500 ms samples see it.
      const jobId = await submit(pool, [
        "sh",
        "-c",
        "end=$(($(date +%s) + 2)); while [ $(date +%s) -lt $end ]; do i=0; while [ $i -lt 1000 ]; do i=$((i+1)); done; done",
      ]);
      await waitForState(jobId, "succeeded");
      const { usage } = await job(jobId);
      expect(usage?.wall_seconds).toBeGreaterThan(0);
      if ((await processGroupMembers(process.pid)) !== null) {
        expect(usage?.cpu_seconds).toBeGreaterThan(0);
        expect(usage?.peak_memory_mb).toBeGreaterThan(0);
      }
    });

    it("a command that cannot start ends failed with no exit code and agent.spawn_failed", async () => {
      const jobId = await submit(pool, ["/nonexistent/program", "--flag"]);
      await waitForState(jobId, "failed");
      expect(await job(jobId)).toMatchObject({ exit_code: null, error: { code: "agent.spawn_failed" } });
    });

    it("cancel leaves no process of the job alive", async () => {
      const jobId = await submit(pool, TREE);
      await waitForState(jobId, "running");
      const pgid = await recordedGroup(workDir, jobId);
      // The shell and its two sleeps.
      await expect.poll(() => liveProcesses(pgid), { timeout: 10_000 }).toBe(3);

      await user.call("cancelJob", { job_id: jobId });
      await expect.poll(() => liveProcesses(pgid), { timeout: 15_000, interval: 100 }).toBe(0);
      expect((await job(jobId)).state).toBe("cancelled");
    });

    it("timeout leaves no process of the job alive", async () => {
      const jobId = await submit(pool, TREE, { timeout_seconds: 1 });
      const pgid = await recordedGroup(workDir, jobId);
      await waitForState(jobId, "timed_out");
      await expect.poll(() => liveProcesses(pgid), { timeout: 15_000, interval: 100 }).toBe(0);
      expect((await job(jobId)).error?.code).toBe("job.timed_out");
    });

    it("a file written to $CJS_ARTIFACTS_DIR is uploaded before the result", async () => {
      const jobId = await submit(pool, ["sh", "-c", 'printf data > "$CJS_ARTIFACTS_DIR/out.txt"']);
      await waitForState(jobId, "succeeded");
      const { artifacts } = (await user.call("retrieveJob", { job_id: jobId })) as {
        artifacts?: Array<{ artifact_id: string; size_bytes: number; attempt: number | null }>;
      };
      expect(artifacts).toEqual([expect.objectContaining({ artifact_id: "out.txt", size_bytes: 4, attempt: 1 })]);
    });
  });

  describe("an agent restarted mid-job", () => {
    it("loses no log line: the stored lines are every line it took in, once each, in order", async () => {
      const pool = `agent-restart-${transport}`;
      const workDir = await newWorkDir();
      const proxy = await startProxy(transport);
      try {
        const first = spawnAgent({
          ...agentEnv(transport, pool, workDir, proxy.url),
          LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
        });
        // Each line goes to a file the job keeps, then to stdout.
        const jobId = await submit(pool, [
          "sh",
          "-c",
          'echo $$ > pgid; i=0; while [ $i -lt 2000 ]; do i=$((i+1)); echo "line $i" >> printed; echo "line $i"; sleep 0.01; done',
        ]);
        await waitForState(jobId, "running", 30_000);
        await expect
          .poll(async () => (await storedLines(jobId)).length, { timeout: 20_000, interval: 100 })
          .toBeGreaterThanOrEqual(20);

        // The gateway (or NATS) goes away: pushes fail and are retried while lines pile up in the spool.
        proxy.cut();
        const spoolPath = join(workspaceOf(workDir, jobId), ".cjs-log-spool.jsonl");
        const storedBeforeCut = (await storedLines(jobId)).length;
        await expect
          .poll(async () => (await readFile(spoolPath, "utf8")).split("\n").length - 1, {
            timeout: 10_000,
            interval: 50,
          })
          .toBeGreaterThan(storedBeforeCut + 20);

        // kill -9: no flush, no goodbye. The job's shell dies of SIGPIPE at its next line.
        first.kill("SIGKILL");
        await once(first, "exit");
        const pgid = Number((await readFile(join(workspaceOf(workDir, jobId), "pgid"), "utf8")).trim());
        await expect.poll(() => liveProcesses(pgid), { timeout: 10_000, interval: 50 }).toBe(0);
        const storedAtKill = (await storedLines(jobId)).length;
        const spooled = (await readFile(spoolPath, "utf8"))
          .split("\n")
          .filter(Boolean)
          .map((row) => LogLine.parse(JSON.parse(row)));
        const printed = (await readFile(join(workspaceOf(workDir, jobId), "printed"), "utf8"))
          .split("\n")
          .filter(Boolean);
        expect(spooled.length).toBeGreaterThan(storedAtKill);

        // A new agent on the same work dir, straight to the gateway (or NATS), without an API key: the state file is enough.
        const { CJS_API_KEY: _unused, ...withoutKey } = agentEnv(transport, pool, workDir);
        await startAgent(withoutKey);
        await waitForState(jobId, "failed", 30_000);
        expect((await job(jobId)).error?.code).toBe("agent.restarted");

        const stored = await storedLines(jobId);
        const shape = (line: LogLine) => ({ seq: line.seq, stream: line.stream, line: line.line });
        expect(stored.map(shape)).toEqual(spooled.map(shape));
        expect(stored.map((line) => line.seq)).toEqual(stored.map((_, index) => index + 1));
        expect(stored.map((line) => line.line)).toEqual(printed.slice(0, stored.length));
      } finally {
        await proxy.close();
      }
    }, 90_000);
  });

  describe("an agent cut off from the gateway (or NATS)", () => {
    it("catches up once the connection is back: every line stored once, in order, and the result recorded", async () => {
      const pool = `agent-outage-${transport}`;
      const proxy = await startProxy(transport);
      try {
        await startAgent(agentEnv(transport, pool, await newWorkDir(), proxy.url));
        const jobId = await submit(pool, [
          "sh",
          "-c",
          'i=0; while [ $i -lt 150 ]; do i=$((i+1)); echo "line $i"; sleep 0.01; done',
        ]);
        await expect
          .poll(async () => (await storedLines(jobId)).length, { timeout: 20_000, interval: 50 })
          .toBeGreaterThanOrEqual(10);
        proxy.cut();
        // Back only once the agent has met the outage: refused at least twice (it retries with backoff).
        await expect.poll(() => proxy.refused(), { timeout: 20_000, interval: 50 }).toBeGreaterThanOrEqual(2);
        proxy.restore();
        await waitForState(jobId, "succeeded", 30_000);
        expect((await storedLines(jobId)).map((line) => `${line.seq}:${line.line}`)).toEqual(
          Array.from({ length: 150 }, (_, index) => `${index + 1}:line ${index + 1}`),
        );
      } finally {
        await proxy.close();
      }
    });
  });

  describe("a drained agent", () => {
    it("on SIGTERM takes no new job, lets the running one finish and report, then exits 0", async () => {
      const pool = `agent-drain-${transport}`;
      const workDir = await newWorkDir();
      const agent = spawnAgent(agentEnv(transport, pool, workDir));
      const running = await submit(pool, ["sh", "-c", "echo $$ > pgid; sleep 2; echo finished"]);
      await recordedGroup(workDir, running);

      const exited = once(agent, "exit");
      agent.kill("SIGTERM");
      // Once the node is draining nothing more is assigned to it (a job the service started on it before, through the
      // poll that was waiting, would be run: the agent waits for that poll rather than leave such a job behind).
      await expect
        .poll(async () => (await user.call("listNodes", { pool_id: pool })).items.map((node) => node.state), {
          timeout: 20_000,
          interval: 50,
        })
        .toEqual(["draining"]);
      const waiting = await submit(pool, ["echo", "too late"]);
      const [code] = (await exited) as [number | null];
      expect(code).toBe(0);
      expect(await job(running)).toMatchObject({ state: "succeeded", exit_code: 0 });
      expect((await storedLines(running)).map((line) => line.line)).toEqual(["finished"]);
      expect(await job(waiting)).toMatchObject({ state: "queued", pending_reason: "all_nodes_draining" });
    }, 60_000);
  });

  describe("an agent through a NATS restart", () => {
    it("keeps running its job and reports it, every line stored once", async () => {
      const pool = `agent-nats-restart-${transport}`;
      await startAgent(agentEnv(transport, pool, await newWorkDir()));
      const jobId = await submit(pool, [
        "sh",
        "-c",
        'i=0; while [ $i -lt 100 ]; do i=$((i+1)); echo "line $i"; sleep 0.02; done',
      ]);
      await expect
        .poll(async () => (await storedLines(jobId)).length, { timeout: 20_000, interval: 50 })
        .toBeGreaterThanOrEqual(5);
      await nats.restart();
      await waitForState(jobId, "succeeded", 40_000);
      expect((await storedLines(jobId)).map((line) => line.line)).toEqual(
        Array.from({ length: 100 }, (_, index) => `line ${index + 1}`),
      );
    }, 60_000);
  });
});
