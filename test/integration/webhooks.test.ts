import { jetstreamManager } from "@nats-io/jetstream";
import { businessJobsFilter } from "../../shared/records/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookEvent } from "../../shared/contract/index.js";
import { BUCKETS, CONSUMERS, kvStreams } from "../../shared/nats/index.js";
import type { ComputeClient } from "../harness/client.js";
import { errorCodeOf } from "../harness/error-code.js";
import { FakeNode, runJobToEnd } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";
import { documentedVerifier } from "../harness/webhook-verifier.js";
import { startWebhookReceiver, type WebhookReceiver } from "../harness/webhook-receiver.js";

/** Retries a second apart, so a test sees a failed try followed by the next. */
const ENV = { CJS_WEBHOOK_RETRY_SCHEDULE_SECONDS: "1" };
const verify = documentedVerifier();

let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let user: ComputeClient;
let baseUrl: string;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 }, ENV);
  baseUrl = system.gateways[0]!.baseUrl;
  tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(baseUrl, tenant));
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await system?.stop();
  await nats?.stop();
});

async function receiver(...args: Parameters<typeof startWebhookReceiver>): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(...args);
  receivers.push(started);
  return started;
}

/** A fresh business with its own signed-in user: each test's webhooks see only its own jobs. */
async function business() {
  const own = await createTenant(system.gateways[0]!.nc);
  const { client } = await signedInClient(baseUrl, own);
  return { tenant: own, client };
}

/** Runs a job to `outcome` on a pool of its own. */
const runJob = (client: ComputeClient, owner: Tenant, pool: string, outcome: "succeeded" | "failed" = "succeeded") =>
  runJobToEnd(client, baseUrl, owner.app.app_id, pool, outcome);

const events = (target: WebhookReceiver): WebhookEvent[] =>
  target.received.map((received) => JSON.parse(received.body) as WebhookEvent);

describe("webhook subscriptions", () => {
  it("create shows the secret once; list and delete never show it; another business's webhook is 404 and unchanged", async () => {
    const created = await user.call("createWebhook", {
      url: "http://127.0.0.1:9/hook",
      events: ["job.succeeded"],
      description: "ci",
    });
    expect(created.secret).toMatch(/^whsec_[0-9A-Za-z]{48}$/);
    expect(created.webhook).toMatchObject({
      webhook_id: expect.stringMatching(/^whk_/),
      url: "http://127.0.0.1:9/hook",
      events: ["job.succeeded"],
      description: "ci",
    });
    expect(created.webhook).not.toHaveProperty("secret");

    const listed = await user.call("listWebhooks", {});
    expect(listed.items).toEqual([created.webhook]);
    expect(JSON.stringify(listed)).not.toContain(created.secret);

    const other = await business();
    expect(await errorCodeOf(other.client.call("deleteWebhook", { webhook_id: created.webhook.webhook_id }))).toBe(
      "resource.not_found",
    );
    expect(await errorCodeOf(other.client.call("testWebhook", { webhook_id: created.webhook.webhook_id }))).toBe(
      "resource.not_found",
    );
    expect(
      await errorCodeOf(other.client.call("listWebhookDeliveries", { webhook_id: created.webhook.webhook_id })),
    ).toBe("resource.not_found");
    expect((await other.client.call("listWebhooks", {})).items).toEqual([]);
    expect((await user.call("listWebhooks", {})).items).toEqual([created.webhook]);

    expect(await user.call("deleteWebhook", { webhook_id: created.webhook.webhook_id })).toEqual({
      webhook_id: created.webhook.webhook_id,
      deleted: true,
    });
    expect((await user.call("listWebhooks", {})).items).toEqual([]);
    expect(await errorCodeOf(user.call("deleteWebhook", { webhook_id: created.webhook.webhook_id }))).toBe(
      "resource.not_found",
    );
  });

  it("refuses a URL that is not http(s) and an event it does not know with 400", async () => {
    const bad = await user.raw("POST", "/api/compute/webhooks/create", {
      url: "ftp://example.com/hook",
      events: ["job.succeeded"],
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: "request.invalid" });
    const unknown = await user.raw("POST", "/api/compute/webhooks/create", {
      url: "https://example.com/hook",
      events: ["job.exploded"],
    });
    expect(unknown.body).toMatchObject({ code: "request.invalid" });
  });

  it("caps a business at 20 webhooks with webhook.limit_reached", async () => {
    const own = await business();
    for (let index = 0; index < 20; index += 1)
      await own.client.call("createWebhook", { url: `http://127.0.0.1:9/hook-${index}`, events: ["job.*"] });
    const refused = await own.client.raw("POST", "/api/compute/webhooks/create", {
      url: "http://127.0.0.1:9/one-more",
      events: ["job.*"],
    });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "webhook.limit_reached", details: { limit: 20 } });
    const first = await own.client.call("listWebhooks", { limit: 15 });
    const second = await own.client.call("listWebhooks", { limit: 15, cursor: first.next_cursor! });
    expect(first.items).toHaveLength(15);
    expect(second).toMatchObject({ next_cursor: null });
    expect(second.items).toHaveLength(5);
  });
});

describe("the cost rule", () => {
  it("the job-event consumer reads only the job records of businesses that have a webhook", async () => {
    const jsm = await jetstreamManager(system.gateways[0]!.nc);
    const filters = async () =>
      (await jsm.consumers.info(kvStreams.name(BUCKETS.jobs), CONSUMERS.webhookEvents)).config.filter_subjects ?? [];
    const own = await business();
    const subject = `$KV.${BUCKETS.jobs}.${businessJobsFilter(own.tenant.app.app_id, own.tenant.business.business_id)}`;
    expect(await filters()).not.toContain(subject);

    const { webhook } = await own.client.call("createWebhook", { url: "http://127.0.0.1:9/hook", events: ["job.*"] });
    expect(await filters()).toContain(subject);
    expect(
      (await filters()).every((filter) => filter.startsWith(`$KV.${BUCKETS.jobs}.`) && !filter.endsWith(".>")),
    ).toBe(true);
    await own.client.call("deleteWebhook", { webhook_id: webhook.webhook_id });
    expect(await filters()).not.toContain(subject);
  });
});

describe("deliveries", () => {
  it("a job that succeeds makes one job.succeeded delivery, signed with the webhook's secret", async () => {
    const own = await business();
    const target = await receiver();
    const { webhook, secret } = await own.client.call("createWebhook", { url: target.url, events: ["job.succeeded"] });
    const jobId = await runJob(own.client, own.tenant, "hooks-succeed");

    await expect.poll(() => target.received.length, { timeout: 15_000 }).toBe(1);
    const [delivery] = target.received;
    expect(verify(secret, String(delivery!.headers["cjs-signature"]), delivery!.body)).toBe(true);
    const event = JSON.parse(delivery!.body) as WebhookEvent;
    expect(event).toMatchObject({
      id: expect.stringMatching(/^evt_/),
      type: "job.succeeded",
      data: { job: { job_id: jobId, state: "succeeded" } },
    });
    expect(event.data.job).not.toHaveProperty("env");
    expect(delivery!.headers).toMatchObject({
      "cjs-event-id": event.id,
      "cjs-event-type": "job.succeeded",
      "cjs-delivery-id": expect.stringMatching(/^dlv_/),
      "user-agent": expect.any(String),
    });

    await expect
      .poll(
        async () =>
          (await own.client.call("listWebhookDeliveries", { webhook_id: webhook.webhook_id })).items[0]?.state,
        { timeout: 10_000 },
      )
      .toBe("succeeded");
    const { items } = await own.client.call("listWebhookDeliveries", { webhook_id: webhook.webhook_id });
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      event_id: event.id,
      event_type: "job.succeeded",
      next_attempt_at: null,
      attempts: [{ status_code: 200, error: null }],
    });
  });

  it("job.* receives every event of the business's jobs: started and succeeded, started and failed, cancelled", async () => {
    const own = await business();
    const target = await receiver();
    await own.client.call("createWebhook", { url: target.url, events: ["job.*"] });
    const succeeded = await runJob(own.client, own.tenant, "hooks-all-ok");
    const failed = await runJob(own.client, own.tenant, "hooks-all-fail", "failed");
    const { job_id: cancelled } = await own.client.call("submitJob", {
      type: "shell",
      command: ["true"],
      pool_id: "hooks-all-nobody",
    });
    await own.client.call("cancelJob", { job_id: cancelled });
    const typesOf = (jobId: string) =>
      events(target)
        .filter((event) => event.data.job?.job_id === jobId)
        .map((event) => event.type)
        .sort();

    await expect.poll(() => typesOf(succeeded), { timeout: 15_000 }).toEqual(["job.started", "job.succeeded"]);
    await expect.poll(() => typesOf(failed), { timeout: 15_000 }).toEqual(["job.failed", "job.started"]);
    await expect.poll(() => typesOf(cancelled), { timeout: 15_000 }).toEqual(["job.cancelled"]);
  });

  it("a run past its timeout makes job.timed_out", async () => {
    const own = await business();
    const target = await receiver();
    await own.client.call("createWebhook", { url: target.url, events: ["job.timed_out"] });
    const node = await FakeNode.register(own.client, baseUrl, own.tenant.app.app_id, { pool_id: "hooks-timeout" });
    const { job_id } = await own.client.call("submitJob", {
      type: "shell",
      command: ["sleep", "60"],
      pool_id: "hooks-timeout",
      timeout_seconds: 1,
    });
    await expect.poll(async () => (await node.poll(1), node.running.has(job_id)), { timeout: 10_000 }).toBe(true);

    await expect
      .poll(() => events(target).map((event) => [event.type, event.data.job?.job_id, event.data.job?.state]), {
        timeout: 15_000,
      })
      .toEqual([["job.timed_out", job_id, "timed_out"]]);
  });

  it("a webhook gets only the events it names", async () => {
    const own = await business();
    const onlyFailed = await receiver();
    const everything = await receiver();
    const { webhook } = await own.client.call("createWebhook", { url: onlyFailed.url, events: ["job.failed"] });
    await own.client.call("createWebhook", { url: everything.url, events: ["job.*"] });
    await runJob(own.client, own.tenant, "hooks-only-ok");
    const bad = await runJob(own.client, own.tenant, "hooks-only-bad", "failed");

    // Each job change is queued for every webhook of the business at once: once the job.*
    // receiver has all four events, the other webhook's deliveries are all recorded.
    await expect.poll(() => events(everything).length, { timeout: 15_000 }).toBe(4);
    const { items } = await own.client.call("listWebhookDeliveries", { webhook_id: webhook.webhook_id });
    expect(items.map((delivery) => delivery.event_type)).toEqual(["job.failed"]);
    await expect
      .poll(() => events(onlyFailed).map((event) => [event.type, event.data.job?.job_id]), { timeout: 15_000 })
      .toEqual([["job.failed", bad]]);
  });

  it("a receiver answering 500 then 200 is tried again and the log shows both status codes", async () => {
    const own = await business();
    const target = await receiver((_received, index) => (index === 0 ? 500 : 200));
    const { webhook } = await own.client.call("createWebhook", { url: target.url, events: ["job.succeeded"] });
    await runJob(own.client, own.tenant, "hooks-retry");

    await expect
      .poll(
        async () =>
          (await own.client.call("listWebhookDeliveries", { webhook_id: webhook.webhook_id })).items[0]?.state,
        { timeout: 20_000 },
      )
      .toBe("succeeded");
    const [delivery] = (await own.client.call("listWebhookDeliveries", { webhook_id: webhook.webhook_id })).items;
    expect(delivery!.attempts.map((attempt) => attempt.status_code)).toEqual([500, 200]);
    expect(new Set(target.received.map((received) => received.headers["cjs-event-id"])).size).toBe(1);
  });

  it("a receiver that hangs does not hold up jobs: they finish and their results are recorded while its deliveries wait", async () => {
    const own = await business();
    let release: () => void = () => undefined;
    const released = new Promise<number>((resolve) => (release = () => resolve(200)));
    const target = await receiver(() => released);
    const { webhook } = await own.client.call("createWebhook", { url: target.url, events: ["job.*"] });
    await runJob(own.client, own.tenant, "hooks-hang-first");
    // The receiver holds its first POST open from here on.
    await expect.poll(() => target.received.length, { timeout: 15_000 }).toBeGreaterThan(0);

    const later = [
      await runJob(own.client, own.tenant, "hooks-hang-a"),
      await runJob(own.client, own.tenant, "hooks-hang-b"),
    ];
    for (const jobId of later)
      expect((await own.client.call("retrieveJob", { job_id: jobId })).job).toMatchObject({
        state: "succeeded",
        exit_code: 0,
      });
    const { items } = await own.client.call("listWebhookDeliveries", { webhook_id: webhook.webhook_id });
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((delivery) => delivery.state === "pending" && delivery.attempts.length === 0)).toBe(true);
    release();
  });

  it("the test operation delivers a webhook.test event through the same path", async () => {
    const own = await business();
    const target = await receiver();
    const { webhook, secret } = await own.client.call("createWebhook", { url: target.url, events: ["job.failed"] });
    const queued = await own.client.call("testWebhook", { webhook_id: webhook.webhook_id });
    expect(queued.delivery_id).toMatch(/^dlv_/);

    await expect.poll(() => target.received.length, { timeout: 15_000 }).toBe(1);
    const [delivery] = target.received;
    expect(JSON.parse(delivery!.body)).toMatchObject({
      id: queued.event_id,
      type: "webhook.test",
      data: { job: null },
    });
    expect(delivery!.headers["cjs-delivery-id"]).toBe(queued.delivery_id);
    expect(verify(secret, String(delivery!.headers["cjs-signature"]), delivery!.body)).toBe(true);
  });
});

describe("private receiver addresses", () => {
  let strictNats: NatsHarness;
  let strict: RunningSystem;
  let strictUser: ComputeClient;

  beforeAll(async () => {
    strictNats = await startNats();
    strict = await startSystem(
      strictNats.url,
      { gateways: 1, schedulers: 1, registries: 1 },
      { CJS_WEBHOOKS_ALLOW_PRIVATE_URLS: "false" },
    );
    const own = await createTenant(strict.gateways[0]!.nc);
    ({ client: strictUser } = await signedInClient(strict.gateways[0]!.baseUrl, own));
  });

  afterAll(async () => {
    await strict?.stop();
    await strictNats?.stop();
  });

  it.each([
    "http://127.0.0.1:8080/hook",
    "http://10.0.0.5/hook",
    "http://169.254.169.254/latest",
    "http://[::1]/hook",
    "http://localhost:8080/hook",
  ])("refuses %s with 400 saying the operator can allow it", async (url) => {
    const refused = await strictUser.raw("POST", "/api/compute/webhooks/create", { url, events: ["job.*"] });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: "request.invalid",
      message: expect.stringContaining("CJS_WEBHOOKS_ALLOW_PRIVATE_URLS"),
    });
    expect((await strictUser.call("listWebhooks", {})).items).toEqual([]);
  });
});
