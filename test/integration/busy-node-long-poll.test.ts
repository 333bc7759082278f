import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Agent,
  buildAgent,
  httpNodePlane,
  loadConfig as loadAgentConfig,
  natsLink,
  natsNodePlane,
  type NodePlane,
} from "../../clients/agent/index.js";
import { DeliveredCommand, type JobState } from "../../shared/contract/index.js";
import { decodeJson, subjects } from "../../shared/nats/index.js";
import { systemClock } from "../../shared/runtime/index.js";
import type { ComputeClient } from "../harness/client.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

/**
 * No job waits on a timer to reach a busy node with a free slot: the node's poll names
 * the attempts it runs and waits, and the gateway answers it the moment another attempt
 * is assigned (or one it runs is ended by the service). Proved by the order of events,
 * never by time: the poll that delivers a job was already waiting when the job was
 * submitted, and the gateway asked the scheduler again because an event woke it, not
 * because its wait ran out.
 */
const TRANSPORTS = ["http", "nats"] as const;

let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let user: ComputeClient;
let apiKey: string;
let baseUrl: string;
/** Sees every poll the gateways send the scheduler (a plain subscription beside the scheduler's queue group). */
let tap: NatsConnection;
const workDirs: string[] = [];
const agents: Agent[] = [];

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 });
  baseUrl = system.gateways[0]!.baseUrl;
  tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(baseUrl, tenant));
  apiKey = (await user.call("createApiKey", { name: "long poll tests" })).key;
  tap = await connect({ servers: nats.url });
});

afterAll(async () => {
  await Promise.all(agents.map((agent) => agent.stop()));
  await tap?.close();
  await system?.stop();
  await nats?.stop();
  await Promise.all(workDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function state(jobId: string): Promise<JobState> {
  return (await user.call("retrieveJob", { job_id: jobId })).job.state;
}

async function waitForState(jobId: string, expected: JobState): Promise<void> {
  await expect.poll(() => state(jobId), { timeout: 20_000, interval: 50 }).toBe(expected);
}

/** What the agent's plane did, in order: each poll sent and answered, and the test's own marks. */
type Happening =
  | { kind: "poll-sent"; poll: number; known: number }
  | { kind: "poll-answered"; poll: number; jobIds: string[] }
  | { kind: "mark"; what: string };

/** The plane with every poll recorded, for the node key too (`withNodeKey` wraps what it returns). */
function recorded(plane: NodePlane, log: Happening[], counter = { polls: 0 }): NodePlane {
  return {
    ...plane,
    withNodeKey: (key) => recorded(plane.withNodeKey(key), log, counter),
    poll: async (request, signal) => {
      const poll = (counter.polls += 1);
      log.push({ kind: "poll-sent", poll, known: request.known?.length ?? 0 });
      const answer = await plane.poll(request, signal);
      log.push({ kind: "poll-answered", poll, jobIds: answer.jobs.map((job) => job.job_id) });
      return answer;
    },
  };
}

describe.each(TRANSPORTS)("a busy node with a free slot (%s node plane)", (transport) => {
  it("gets the next job from the poll that was already waiting when it was submitted", async () => {
    const pool = `busy-${transport}`;
    const workDir = await mkdtemp(join(tmpdir(), "cjs-long-poll-"));
    workDirs.push(workDir);
    const config = loadAgentConfig({
      CJS_GATEWAY_URL: baseUrl,
      CJS_APP_ID: tenant.app.app_id,
      CJS_API_KEY: apiKey,
      CJS_POOL: pool,
      CJS_SLOTS: "2",
      CJS_WORK_DIR: workDir,
      LOG_LEVEL: "silent",
    });
    const link =
      transport === "nats"
        ? natsLink({
            url: nats.url,
            credentials: config,
            inboxPrefix: config.CJS_AGENT_NATS_INBOX_PREFIX,
            name: "long poll test",
          })
        : undefined;
    const plane =
      link !== undefined
        ? natsNodePlane({ link, appId: tenant.app.app_id })
        : httpNodePlane({ gatewayUrl: baseUrl, appId: tenant.app.app_id, fetch });
    const log: Happening[] = [];
    const agent = buildAgent({
      config,
      logger: pino({ level: "silent" }),
      clock: systemClock,
      env: process.env,
      plane: recorded(plane, log),
    });
    agents.push(agent);
    await agent.start();

    const long = (await user.call("submitJob", { type: "shell", command: ["sleep", "600"], pool_id: pool })).job_id;
    await waitForState(long, "running");
    // The job reads as running once the poll assigned it, which may be before its answer reaches the agent: wait for that.
    const answeredLong = () => log.find((entry) => entry.kind === "poll-answered" && entry.jobIds.includes(long));
    await expect.poll(() => answeredLong() !== undefined).toBe(true);
    // The poll that delivered the long job has answered; the agent's next one is out (and, being busy, it would wait
    // on a timer before asking again if the gateway answered a busy node at once).
    const deliveredLong = answeredLong();
    const deliveredPoll = deliveredLong?.kind === "poll-answered" ? deliveredLong.poll : Number.POSITIVE_INFINITY;
    await expect.poll(() => log.some((entry) => entry.kind === "poll-sent" && entry.poll > deliveredPoll)).toBe(true);

    log.push({ kind: "mark", what: "submit" });
    const short = (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: pool })).job_id;
    await waitForState(short, "succeeded");

    const submittedAt = log.findIndex((entry) => entry.kind === "mark");
    const delivering = log.find((entry) => entry.kind === "poll-answered" && entry.jobIds.includes(short));
    const deliveringPoll = delivering?.kind === "poll-answered" ? delivering.poll : -1;
    const sentAt = log.findIndex((entry) => entry.kind === "poll-sent" && entry.poll === deliveringPoll);
    expect(sentAt).toBeGreaterThanOrEqual(0);
    expect(sentAt).toBeLessThan(submittedAt);
    expect(await state(long)).toBe("running");

    // More short jobs, one after another: what the agent names as known stays what it runs (and an attempt just
    // finished), however many answers the gateway gave from the assignments' events alone.
    for (let index = 0; index < 6; index += 1) {
      const next = (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: pool })).job_id;
      await waitForState(next, "succeeded");
    }
    const largestKnown = Math.max(...log.flatMap((entry) => (entry.kind === "poll-sent" ? [entry.known] : [])));
    expect(largestKnown).toBeLessThanOrEqual(4);

    await user.call("cancelJob", { job_id: long });
    await agent.stop();
    await link?.close();
  }, 60_000);
});

/** Counts the scheduler polls the gateway sends for one node. */
function countAsks(nodeId: string): { count(): number; stop(): void } {
  return countNodeCalls(nodeId, [subjects.nodePoll()]);
}

/** Counts the attempts the gateway tells the scheduler it gave the node from their events (on any subject they go). */
function countDelivered(nodeId: string): { count(): number; stop(): void } {
  return countNodeCalls(nodeId, [
    subjects.nodeDelivered(),
    subjects.nodeDeliveredOfPartition("00").replace(".00.", ".*."),
  ]);
}

function countNodeCalls(nodeId: string, subjectList: string[]): { count(): number; stop(): void } {
  let calls = 0;
  const subscriptions = subjectList.map((subject) =>
    tap.subscribe(subject, {
      callback: (error, message) => {
        if (error) return;
        if (DeliveredCommand.pick({ caller: true }).parse(decodeJson(message.data)).caller.node_id === nodeId)
          calls += 1;
      },
    }),
  );
  return { count: () => calls, stop: () => subscriptions.forEach((subscription) => subscription.unsubscribe()) };
}

describe("the long poll of a node that names what it runs", () => {
  async function nodeRunningOne(pool: string) {
    const node = await FakeNode.register(user, baseUrl, tenant.app.app_id, { pool_id: pool });
    const first = (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: pool })).job_id;
    await expect.poll(async () => (await node.poll(0)).some((job) => job.job_id === first)).toBe(true);
    await tap.flush();
    return { node, first, known: [{ job_id: first, attempt: 1 }] };
  }

  it("waits while nothing else is assigned, and answers with only the new attempt when one is", async () => {
    const { node, first, known } = await nodeRunningOne("lp-assign");
    const asks = countAsks(node.nodeId);
    const delivered = countDelivered(node.nodeId);
    const answer = node.client.call("poll", { wait_seconds: 30, known });
    // The first ask found nothing new: the poll waits.
    await expect.poll(() => asks.count()).toBe(1);
    const second = (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: "lp-assign" })).job_id;
    const { jobs, held } = await answer;
    expect(jobs.map((job) => job.job_id)).toEqual([second]);
    expect(jobs[0]?.artifact_upload_url).toContain(second);
    // The event says nothing of what the node finished meanwhile: `held` is left out, not guessed.
    expect(held).toBeUndefined();
    expect(first).not.toBe(second);
    // Woken by the assignment, whose event carried the attempt: given without asking, and the scheduler told.
    await expect.poll(() => delivered.count()).toBe(1);
    asks.stop();
    delivered.stop();
    expect(asks.count()).toBe(1);
    // The start the scheduler held is written: the job runs, started when the node was given it.
    await waitForState(second, "running");
  }, 60_000);

  it("answers when the service ends an attempt the node runs, without it in `held`", async () => {
    const { node, first, known } = await nodeRunningOne("lp-cancel");
    const asks = countAsks(node.nodeId);
    const answer = node.client.call("poll", { wait_seconds: 30, known });
    await expect.poll(() => asks.count()).toBe(1);
    await user.call("cancelJob", { job_id: first });
    const { jobs, held } = await answer;
    asks.stop();
    expect(jobs).toEqual([]);
    expect(held).toEqual([]);
    expect(asks.count()).toBe(2);
  }, 60_000);

  it("ends when the node is set draining, so a draining agent is not held up by it", async () => {
    const { node, first, known } = await nodeRunningOne("lp-drain");
    const asks = countAsks(node.nodeId);
    const answer = node.client.call("poll", { wait_seconds: 30, known });
    await expect.poll(() => asks.count()).toBe(1);
    await node.client.call("drainNode", { draining: true });
    const { jobs, held } = await answer;
    asks.stop();
    expect(jobs).toEqual([]);
    expect(held?.map((attempt) => attempt.job_id)).toEqual([first]);
    expect(asks.count()).toBe(2);
  }, 60_000);

  /** The node told of a second job by a long poll; the asks the gateway made for it are counted from here on. */
  async function nodeToldOfASecond(pool: string) {
    const { node, first, known } = await nodeRunningOne(pool);
    const asks = countAsks(node.nodeId);
    const answer = node.client.call("poll", { wait_seconds: 30, known });
    await expect.poll(() => asks.count()).toBe(1);
    const second = (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: pool })).job_id;
    const { jobs } = await answer;
    expect(asks.count()).toBe(1);
    return { node, first, second, asks, told: [...known, ...jobs.map(({ job_id, attempt }) => ({ job_id, attempt }))] };
  }

  it("knowing what the last answer told it, waits for the next event without asking first", async () => {
    const { node, second, asks, told } = await nodeToldOfASecond("lp-told");
    expect(told.map((attempt) => attempt.job_id)).toContain(second);
    const answer = node.client.call("poll", { wait_seconds: 30, known: told });
    const third = (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: "lp-told" })).job_id;
    const { jobs, held } = await answer;
    asks.stop();
    expect(jobs.map((job) => job.job_id)).toEqual([third]);
    expect(held).toBeUndefined();
    // No ask: none before the wait, and the assignment's event carried the attempt.
    expect(asks.count()).toBe(1);
  }, 60_000);

  it("having finished an attempt the last answer gave it, and naming only what it runs, still waits without asking", async () => {
    const { node, first, second, asks } = await nodeToldOfASecond("lp-finished");
    await node.client.call("result", { job_id: first, attempt: 1, outcome: "succeeded", exit_code: 0 });
    const answer = node.client.call("poll", { wait_seconds: 30, known: [{ job_id: second, attempt: 1 }] });
    const third = (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: "lp-finished" })).job_id;
    const { jobs } = await answer;
    asks.stop();
    expect(jobs.map((job) => job.job_id)).toEqual([third]);
    expect(asks.count()).toBe(1);
  }, 60_000);

  it("missing an attempt the last answer delivered (that answer was lost), gets it again at once", async () => {
    const { node, first, second, asks } = await nodeToldOfASecond("lp-lost");
    const { jobs } = await node.client.call("poll", { wait_seconds: 30, known: [{ job_id: first, attempt: 1 }] });
    asks.stop();
    expect(jobs.map((job) => job.job_id)).toEqual([second]);
    expect(asks.count()).toBe(2);
  }, 60_000);

  it("knowing what the last answer told it, asks once when its wait ends with no event", async () => {
    const { node, first, second, asks, told } = await nodeToldOfASecond("lp-quiet");
    const { jobs, held } = await node.client.call("poll", { wait_seconds: 1, known: told });
    asks.stop();
    expect(jobs).toEqual([]);
    expect(held?.map((attempt) => attempt.job_id).sort()).toEqual([first, second].sort());
    expect(asks.count()).toBe(2);
  }, 60_000);

  it("answers an earlier agent (no `known`) at once with every attempt while the node holds one", async () => {
    const { node, first } = await nodeRunningOne("lp-earlier");
    const { jobs, held } = await node.client.call("poll", { wait_seconds: 30 });
    expect(jobs.map((job) => job.job_id)).toEqual([first]);
    expect(held).toBeUndefined();
  }, 60_000);
});
