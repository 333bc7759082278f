import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJson, STREAMS, subjects } from "../../shared/nats/index.js";
import { readLogMessage } from "../../shared/records/index.js";
import { metricsRegistry } from "../../shared/runtime/index.js";
import { failureOf } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
import { logLines, runningJobWithLogs } from "../harness/log-jobs.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem } from "../harness/system.js";

/**
 * Log bytes are capped per job (truncated, as past the line cap), per node and hour, and
 * per business and day (its plan's `max_log_bytes_per_day`): a node or business over its
 * quota is refused with 429 `logs.quota_exceeded`, and nobody else is. A node past its hour
 * is refused by the gateway itself once the log relay has refused it.
 */
const JOB_BYTES = 10_000;
const NODE_BYTES_PER_HOUR = 20_000;
const BUSINESS_BYTES_PER_DAY = 30_000;
const LINE = "x".repeat(1_000);

let nats: NatsHarness;
let system: RunningSystem;
let baseUrl: string;
let plansDir: string;

/** A tenant of its own, and nodes of its pool each running `jobs` jobs of it, pushing their lines as the node. */
async function tenantOf(pool: string) {
  const tenant = await createTenant(system.gateways[0]!.nc);
  const { client } = await signedInClient(baseUrl, tenant);
  return {
    job: () => runningJobWithLogs(client, baseUrl, tenant.app.app_id, pool),
    async node(jobs: number) {
      const node = await FakeNode.register(client, baseUrl, tenant.app.app_id, { pool_id: pool });
      const ids: string[] = [];
      for (let index = 0; index < jobs; index += 1)
        ids.push((await client.call("submitJob", { type: "shell", command: ["echo"], pool_id: pool })).job_id);
      while (ids.some((id) => !node.running.has(id))) await node.poll(5);
      return ids.map((jobId) => ({
        push: (lines: number) =>
          node.client.call("pushLogs", { job_id: jobId, attempt: 1, lines: logLines(1, lines, () => LINE) }),
      }));
    },
  };
}

/** Pushes the log relay has answered with `outcome` (its `cjs_log_pushes_total`; this process runs the only one). */
async function relayPushes(outcome: string): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric("cjs_log_pushes_total")?.get();
  return metric?.values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
}

beforeAll(async () => {
  plansDir = await mkdtemp(join(tmpdir(), "cjs-log-caps-"));
  const shipped = JSON.parse(await readFile("services/billing/plans.json", "utf8")) as {
    plans: Array<{ limits: Record<string, number> }>;
  };
  for (const plan of shipped.plans) plan.limits.max_log_bytes_per_day = BUSINESS_BYTES_PER_DAY;
  const plansFile = join(plansDir, "plans.json");
  await writeFile(plansFile, JSON.stringify(shipped));
  nats = await startNats();
  system = await startSystem(
    nats.url,
    { gateways: 1, schedulers: 1, registries: 1 },
    {
      CJS_LOG_MAX_BYTES_PER_JOB: String(JOB_BYTES),
      CJS_LOG_MAX_BYTES_PER_NODE_PER_HOUR: String(NODE_BYTES_PER_HOUR),
      CJS_LOG_USAGE_FLUSH_MS: "50",
      CJS_BILLING_PLANS_FILE: plansFile,
    },
  );
  baseUrl = system.gateways[0]!.baseUrl;
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
  await rm(plansDir, { recursive: true, force: true });
});

describe("the byte cap of a job", () => {
  it("stores lines up to it, then one marker naming it, and counts the rest as dropped, now and in later pushes", async () => {
    const { push, jobId } = await (await tenantOf("caps-job")).job();
    // 15 lines of 1 000 bytes: 10 fit in 10 000 bytes.
    expect(
      await push(
        1,
        logLines(1, 15, () => LINE),
      ),
    ).toEqual({ accepted: 10, duplicates: 0, dropped: 5 });
    expect(
      await push(
        1,
        logLines(16, 18, () => LINE),
      ),
    ).toEqual({ accepted: 0, duplicates: 0, dropped: 3 });
    // A resend of stored lines is still a duplicate, not a drop.
    expect(
      await push(
        1,
        logLines(1, 5, () => LINE),
      ),
    ).toEqual({ accepted: 0, duplicates: 5, dropped: 0 });

    const jsm = await jetstreamManager(system.gateways[0]!.nc);
    const last = await jsm.streams.getMessage(STREAMS.logs, { last_by_subj: subjects.jobLogs(jobId, 1) });
    const stored = readLogMessage(decodeJson(last!.data));
    expect(stored?.lines.at(-1)).toMatchObject({
      seq: 11,
      stream: "stderr",
      line: `[log truncated: this job reached its limit of ${JOB_BYTES} bytes; later lines are not stored]`,
    });
  });
});

describe("the log quotas of a node and of a business", () => {
  it("refuse a node past its bytes of the hour with 429 logs.quota_exceeded, and not another tenant's node", async () => {
    const [first, second, third] = await (await tenantOf("caps-node")).node(3);
    // 10 000 bytes each: after two jobs the node's hour is at its 20 000.
    expect((await first!.push(10)).accepted).toBe(10);
    expect((await second!.push(10)).accepted).toBe(10);
    const refused = await failureOf(third!.push(1));
    expect(refused).toMatchObject({
      code: "logs.quota_exceeded",
      status: 429,
      details: { limit: "node_hour", max_bytes: NODE_BYTES_PER_HOUR, resets_at: expect.any(String) },
    });

    const [other] = await (await tenantOf("caps-node-quiet")).node(1);
    expect((await other!.push(3)).accepted).toBe(3);
  });

  it("once the log relay refuses a node past its hour, the gateway refuses its later pushes alike without asking it, and no other node's", async () => {
    const tenant = await tenantOf("caps-node-spent");
    const [first, second, third] = await tenant.node(3);
    expect((await first!.push(10)).accepted).toBe(10);
    expect((await second!.push(10)).accepted).toBe(10);
    const refusedBefore = await relayPushes("logs.quota_exceeded");
    const relayed = await failureOf(third!.push(1));
    expect(await relayPushes("logs.quota_exceeded")).toBe(refusedBefore + 1);

    const remembered = await failureOf(first!.push(1));
    expect(await relayPushes("logs.quota_exceeded")).toBe(refusedBefore + 1);
    for (const refusal of [relayed, remembered])
      expect(refusal).toMatchObject({
        code: "logs.quota_exceeded",
        status: 429,
        details: { limit: "node_hour", max_bytes: NODE_BYTES_PER_HOUR, resets_at: relayed.details?.resets_at },
      });
    expect(remembered.message).toBe(relayed.message);

    // Another node of the same business, with a key of its own, still reaches the log relay.
    const storedBefore = await relayPushes("ok");
    const [other] = await tenant.node(1);
    expect((await other!.push(3)).accepted).toBe(3);
    expect(await relayPushes("ok")).toBe(storedBefore + 1);
  });

  it("refuse every node of a business past its plan's bytes of the day, and not another business's", async () => {
    const noisy = await tenantOf("caps-business");
    const [a1, a2] = await noisy.node(2);
    const [b1, b2] = await noisy.node(2);
    // 18 000 and 14 000 bytes: each node under its hour (20 000), the business over its day (30 000).
    expect((await a1!.push(10)).accepted).toBe(10);
    expect((await a2!.push(8)).accepted).toBe(8);
    expect((await b1!.push(10)).accepted).toBe(10);
    expect((await b2!.push(4)).accepted).toBe(4);
    const [c1] = await noisy.node(1);
    for (const job of [a2, b2, c1]) {
      expect(await failureOf(job!.push(1))).toMatchObject({
        code: "logs.quota_exceeded",
        details: { limit: "business_day", max_bytes: BUSINESS_BYTES_PER_DAY },
      });
    }
    const [other] = await (await tenantOf("caps-business-quiet")).node(1);
    expect((await other!.push(3)).accepted).toBe(3);
  });
});
