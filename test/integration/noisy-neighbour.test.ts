import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logStreamPath } from "../../shared/contract/index.js";
import { requestRpc } from "../../shared/nats/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";
import { ComputeClient } from "../harness/client.js";
import { failureOf } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
import { logLines } from "../harness/log-jobs.js";
import { openLogStream, readToEnd, tryLogStream } from "../harness/log-stream-client.js";
import { NATS_TOPOLOGIES, type RunningNats } from "../harness/nats-topologies.js";
import { createTenant, signedInClient, startSystemOn, type RunningSystem, type Tenant } from "../harness/system.js";

/**
 * One tenant at every one of its limits (log streams per user, per signed URL and per
 * business; log bytes per node and hour and per business and day) is refused there, with
 * 429s that name the limit, while another tenant signs in, submits, streams a job's log
 * with a credential and through a signed URL, pushes lines and reports the result as if
 * nothing were going on. On one server and on the 3-node cluster.
 */
const PER_USER = 3;
const PER_URL = 2;
const PER_BUSINESS = 5;
const NODE_BYTES_PER_HOUR = 30_000;
const BUSINESS_BYTES_PER_DAY = 45_000;
const LINE = "n".repeat(1_000);

describe.each(NATS_TOPOLOGIES)("a noisy neighbour, on $name", (topology) => {
  let nats: RunningNats;
  let system: RunningSystem;
  let baseUrl: string;
  let plansDir: string;

  beforeAll(async () => {
    plansDir = await mkdtemp(join(tmpdir(), "cjs-noisy-"));
    const plans = JSON.parse(await readFile("services/billing/plans.json", "utf8")) as {
      plans: Array<{ limits: Record<string, number> }>;
    };
    for (const plan of plans.plans) plan.limits.max_log_bytes_per_day = BUSINESS_BYTES_PER_DAY;
    const plansFile = join(plansDir, "plans.json");
    await writeFile(plansFile, JSON.stringify(plans));
    ({ nats, system } = await startSystemOn(
      topology,
      { gateways: 1, schedulers: 1, registries: 1 },
      {
        CJS_LOG_STREAMS_PER_USER: String(PER_USER),
        CJS_LOG_STREAMS_PER_URL: String(PER_URL),
        CJS_LOG_STREAMS_PER_BUSINESS: String(PER_BUSINESS),
        CJS_LOG_MAX_BYTES_PER_NODE_PER_HOUR: String(NODE_BYTES_PER_HOUR),
        CJS_LOG_USAGE_FLUSH_MS: "50",
        CJS_BILLING_PLANS_FILE: plansFile,
      },
    ));
    baseUrl = system.gateways[0]!.baseUrl;
  }, 120_000);

  afterAll(async () => {
    await system?.stop();
    await nats?.stop();
    await rm(plansDir, { recursive: true, force: true });
  });

  /** A node of `pool` running `count` fresh jobs of the tenant's; each job pushes `lines` lines of 1 000 bytes as the node. */
  async function nodeRunning(client: ComputeClient, tenant: Tenant, pool: string, count: number) {
    const node = await FakeNode.register(client, baseUrl, tenant.app.app_id, { pool_id: pool });
    const ids: string[] = [];
    for (let index = 0; index < count; index += 1)
      ids.push((await client.call("submitJob", { type: "shell", command: ["echo"], pool_id: pool })).job_id);
    while (ids.some((id) => !node.running.has(id))) await node.poll(5);
    const push = (jobId: string, from: number, to: number, text: (seq: number) => string = () => LINE) =>
      node.client.call("pushLogs", { job_id: jobId, attempt: 1, lines: logLines(from, to, text) });
    return { node, ids, push };
  }

  function headersOf(tenant: Tenant, accessToken: string): Record<string, string> {
    return { "x-app-id": tenant.app.app_id, authorization: `Bearer ${accessToken}` };
  }

  it("is refused at each of its limits while another tenant's sign-in, submit, log stream, log push and result all work", async () => {
    const noisy = await createTenant(system.gateways[0]!.nc);
    const quiet = await createTenant(system.gateways[0]!.nc);
    const { client: noisyUser, tokens: noisyTokens } = await signedInClient(baseUrl, noisy);
    const noisyHeaders = headersOf(noisy, noisyTokens.access_token);
    const held: Array<{ disconnect(): void }> = [];

    // The noisy tenant's streams: its user's, a signed URL's, then its business's.
    const streamed = await nodeRunning(noisyUser, noisy, "noisy-streams", 2);
    for (let index = 0; index < PER_USER; index += 1)
      held.push(await openLogStream(baseUrl, logStreamPath(streamed.ids[0]!), noisyHeaders));
    const overUser = await tryLogStream(baseUrl, logStreamPath(streamed.ids[0]!), noisyHeaders);
    expect([overUser.response.statusCode, JSON.parse(overUser.body).details]).toEqual([
      429,
      { limit: "per_user", max: PER_USER },
    ]);
    const colleague = await requestRpc(system.gateways[0]!.nc, "adminUserCreate", {
      app_id: noisy.app.app_id,
      business_id: noisy.business.business_id,
      email: `colleague-${randomBase62(8).toLowerCase()}@example.test`,
      password: noisy.password,
      role: "member",
    });
    const colleagueTenant = { ...noisy, user: colleague };
    const { client: colleagueUser } = await signedInClient(baseUrl, colleagueTenant);
    const { url } = await colleagueUser.call("logStreamUrl", { job_id: streamed.ids[1]! });
    for (let index = 0; index < PER_URL; index += 1) held.push(await openLogStream(baseUrl, url));
    const overUrl = await tryLogStream(baseUrl, url);
    expect([overUrl.response.statusCode, JSON.parse(overUrl.body).details]).toEqual([
      429,
      { limit: "per_url", max: PER_URL },
    ]);
    // Three and two: the business's five.
    const { tokens: colleagueTokens } = await signedInClient(baseUrl, colleagueTenant);
    const overBusiness = await tryLogStream(
      baseUrl,
      logStreamPath(streamed.ids[1]!),
      headersOf(noisy, colleagueTokens.access_token),
    );
    expect([overBusiness.response.statusCode, JSON.parse(overBusiness.body).details]).toEqual([
      429,
      { limit: "per_business", max: PER_BUSINESS },
    ]);

    // The noisy tenant's log bytes: one node's hour, then the business's day.
    const chatty = await nodeRunning(noisyUser, noisy, "noisy-bytes", 2);
    expect((await chatty.push(chatty.ids[0]!, 1, 30)).accepted).toBe(30);
    expect(await failureOf(chatty.push(chatty.ids[1]!, 1, 1))).toMatchObject({
      code: "logs.quota_exceeded",
      status: 429,
      details: { limit: "node_hour" },
    });
    const second = await nodeRunning(noisyUser, noisy, "noisy-bytes-2", 1);
    expect((await second.push(second.ids[0]!, 1, 20)).accepted).toBe(20);
    expect(await failureOf(second.push(second.ids[0]!, 21, 21))).toMatchObject({
      code: "logs.quota_exceeded",
      details: { limit: "business_day" },
    });

    // Meanwhile, the other tenant: sign-in, submit, a node taking the job, its log streamed
    // with a credential and through a signed URL, lines pushed, the result reported.
    const { client: quietUser, tokens: quietTokens } = await signedInClient(baseUrl, quiet);
    const work = await nodeRunning(quietUser, quiet, "quiet", 1);
    const jobId = work.ids[0]!;
    const withCredential = await openLogStream(
      baseUrl,
      logStreamPath(jobId),
      headersOf(quiet, quietTokens.access_token),
    );
    const signed = await openLogStream(baseUrl, (await quietUser.call("logStreamUrl", { job_id: jobId })).url);
    expect(await work.push(jobId, 1, 40, (seq: number) => `quiet ${seq}`)).toEqual({
      accepted: 40,
      duplicates: 0,
      dropped: 0,
    });
    expect((await work.node.finish(jobId, "succeeded")).state).toBe("succeeded");
    for (const stream of [withCredential, signed]) {
      const { logs, end } = await readToEnd(stream.frames);
      expect(logs.map((event) => event.data.line)).toEqual(
        logLines(1, 40, (seq) => `quiet ${seq}`).map((line) => line.line),
      );
      expect(end).toMatchObject({ state: "succeeded", dropped_lines: 0 });
    }
    for (const stream of held) stream.disconnect();
  }, 120_000);
});
