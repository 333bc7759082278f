/**
 * Rolling upgrades: while replicas of two versions run side by side, a record a newer
 * replica wrote, with fields this version does not know, keeps them when this version
 * rewrites it (docs/architecture.md, "Rolling upgrades: records keep what they do not
 * know"). Each case plays the newer replica: it adds fields straight into KV (at the top
 * and, where a record carries nested objects over, inside one), drives the operation that
 * makes the current services rewrite the record, and checks the fields are still there.
 *
 * Every bucket of `BUCKETS` is either rewritten (and has a case here) or listed in
 * `NOT_REWRITTEN` with the reason, so a new bucket without coverage fails the first test.
 */
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { BillingSecretRecord, SANDBOX_WEBHOOK_SECRET_KEY } from "../../services/billing/checkout/billing-secret.js";
import { sandboxSessionKey } from "../../services/billing/checkout/sandbox-session-record.js";
import { signSandboxPayload } from "../../services/billing/checkout/sandbox-signature.js";
import { webhookEventKey } from "../../services/billing/checkout/webhook-event-record.js";
import { accountKey, entryKey } from "../../services/billing/ledger/credit-records.js";
import { subscriptionKey } from "../../services/billing/subscriptions/subscription-record.js";
import { idempotencyRecordKey, requestFingerprint } from "../../services/gateway/idempotency/idempotency-key.js";
import { scheduleKey } from "../../services/scheduler/schedules/schedule-record.js";
import { ComputeClient } from "../harness/client.js";
import { billingWebhookPath, RPC_ROUTES, SANDBOX_SIGNATURE_HEADER } from "../../shared/contract/index.js";
import { BUCKETS, type BucketName, JsonBucket, kvKey, requestRpc } from "../../shared/nats/index.js";
import { jobKey } from "../../shared/records/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";
import { errorCodeOf } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";
import { startWebhookReceiver } from "../harness/webhook-receiver.js";

/** Buckets whose values no service rewrites, and why: nothing of a newer replica's can be lost there. */
const NOT_REWRITTEN = {
  [BUCKETS.apps]: "created once by the operator command, never rewritten",
  [BUCKETS.businesses]: "created once by the operator command, never rewritten",
  [BUCKETS.businessUsers]: "an empty marker written when the user is created, never rewritten",
  [BUCKETS.userEmails]: "created once with the user (the create is the uniqueness check), never rewritten",
  [BUCKETS.apiKeyOwners]: "an empty marker written when the key is minted, never rewritten",
  [BUCKETS.billingSecrets]: "created once by the first billing replica, never rewritten",
  [BUCKETS.leases]: "replaced whole: each value is its holder's own renewal, and a takeover writes the new holder's",
  [BUCKETS.artifactIndex]: "replaced whole: a newer upload's entry describes another object version",
  [BUCKETS.webhooks]: "created once by the create RPC, never rewritten (a delete erases it)",
  [BUCKETS.webhookKeys]: "created once by the first webhooks replica, never rewritten",
} as const satisfies Partial<Record<BucketName, string>>;

const NEWER = { newer_field: "written by a newer replica" } as const;
const NEWER_NESTED = { newer_nested: 7 } as const;

type Raw = Record<string, unknown>;
type Nested = (record: Raw) => void;

let nats: NatsHarness;
let system: RunningSystem;
let nc: NatsConnection;
let kvm: Kvm;
let baseUrl: string;
let tenant: Tenant;
let user: ComputeClient;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 });
  nc = system.gateways[0]!.nc;
  baseUrl = system.gateways[0]!.baseUrl;
  kvm = new Kvm(nc);
  tenant = await createTenant(nc);
  ({ client: user } = await signedInClient(baseUrl, tenant));
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

/** A bucket read as plain JSON objects, whatever fields they have. */
async function rawBucket(bucket: BucketName): Promise<JsonBucket<z.ZodRecord<z.ZodString, z.ZodUnknown>>> {
  return new JsonBucket(await kvm.open(bucket), z.record(z.string(), z.unknown()));
}

/** Plays the newer replica: adds `NEWER` to the stored record (and `nested` inside it), by compare-and-set. */
async function addNewerFields(bucket: BucketName, key: string, nested?: Nested): Promise<void> {
  const written = await (await rawBucket(bucket)).mutate(key, (record) => {
    const next = structuredClone({ ...record, ...NEWER });
    nested?.(next);
    return next;
  });
  expect(written, `${bucket} ${key} exists`).not.toBeNull();
}

async function stored(bucket: BucketName, key: string): Promise<Raw> {
  const entry = await (await rawBucket(bucket)).get(key);
  expect(entry, `${bucket} ${key} exists`).not.toBeNull();
  return entry!.value;
}

/** The one key of the bucket under `filter` (a record the test made, found by its tenancy). */
async function onlyKey(bucket: BucketName, filter: string): Promise<string> {
  const keys = await (await rawBucket(bucket)).keys(filter);
  expect(keys).toHaveLength(1);
  return keys[0]!;
}

const nestedIn =
  (...path: string[]): Nested =>
  (record) => {
    const target = path.reduce<Raw>((object, field) => object[field] as Raw, record);
    Object.assign(target, NEWER_NESTED);
  };

function nestedOf(record: Raw, ...path: string[]): unknown {
  return path.reduce<unknown>((object, field) => (object as Raw)[field], record);
}

async function sandboxSecret(): Promise<Buffer> {
  const secrets = new JsonBucket(await kvm.open(BUCKETS.billingSecrets), BillingSecretRecord);
  return Buffer.from((await secrets.get(SANDBOX_WEBHOOK_SECRET_KEY))!.value.secret, "base64url");
}

/** Posts a signed sandbox `checkout.completed` event with this id for the tenant's business; answers the reply's payload. */
async function postCheckoutEvent(eventId: string): Promise<Raw> {
  const now = Date.now();
  const body = JSON.stringify({
    id: eventId,
    type: "checkout.completed",
    created: Math.floor(now / 1000),
    data: {
      app_id: tenant.app.app_id,
      business_id: tenant.business.business_id,
      plan_id: "team",
      customer_id: "cus_upgrade_test",
      subscription_id: "sub_upgrade_test",
      period_start: new Date(now).toISOString(),
      period_end: new Date(now + 30 * 86_400_000).toISOString(),
      session_ref: null,
    },
  });
  const response = await fetch(`${baseUrl}${billingWebhookPath("sandbox")}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      [SANDBOX_SIGNATURE_HEADER]: signSandboxPayload(await sandboxSecret(), body, now / 1000),
    },
    body,
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { payload: Raw }).payload;
}

function setCredit(amount: number) {
  return requestRpc(nc, "adminCreditSet", { business_id: tenant.business.business_id, amount });
}

/** One case per rewritten bucket: the type makes a bucket left out of both lists a compile error too. */
const REWRITTEN: Record<
  Exclude<BucketName, keyof typeof NOT_REWRITTEN>,
  { operation: string; run: () => Promise<void> }
> = {
  [BUCKETS.nodes]: {
    operation: "a heartbeat, then a drain",
    async run() {
      const node = await FakeNode.register(user, baseUrl, tenant.app.app_id, { pool_id: "upgrade-nodes" });
      await addNewerFields(BUCKETS.nodes, node.nodeId, nestedIn("capacity"));
      const before = await stored(BUCKETS.nodes, node.nodeId);
      await node.heartbeat();
      const beaten = await stored(BUCKETS.nodes, node.nodeId);
      expect(beaten.updated_at).not.toBe(before.updated_at);
      expect(beaten).toMatchObject(NEWER);
      expect(nestedOf(beaten, "capacity")).toMatchObject(NEWER_NESTED);

      await user.call("drainNode", { node_id: node.nodeId, draining: true });
      const drained = await stored(BUCKETS.nodes, node.nodeId);
      expect(drained).toMatchObject({ draining: true, ...NEWER });
      expect(nestedOf(drained, "capacity")).toMatchObject(NEWER_NESTED);
    },
  },
  [BUCKETS.allocations]: {
    operation: "two jobs placed, one finished (its attempt released)",
    async run() {
      const node = await FakeNode.register(user, baseUrl, tenant.app.app_id, { pool_id: "upgrade-alloc" });
      const [kept, finished] = await Promise.all(
        [0, 1].map(() => user.call("submitJob", { type: "shell", command: ["true"], pool_id: "upgrade-alloc" })),
      );
      await expect.poll(async () => (await node.poll(), node.running.size), { timeout: 10_000 }).toBe(2);
      await addNewerFields(BUCKETS.allocations, node.nodeId, nestedIn("attempts", kept!.job_id));
      await node.finish(finished!.job_id);
      // The release goes in the node's next write, or on its own a moment later (decision 0088).
      await expect
        .poll(async () => Object.keys((await stored(BUCKETS.allocations, node.nodeId)).attempts as Raw))
        .toEqual([kept!.job_id]);
      const allocation = await stored(BUCKETS.allocations, node.nodeId);
      expect(allocation).toMatchObject(NEWER);
      expect(nestedOf(allocation, "attempts", kept!.job_id)).toMatchObject(NEWER_NESTED);
    },
  },
  [BUCKETS.jobs]: {
    operation: "a placed job finished",
    async run() {
      const node = await FakeNode.register(user, baseUrl, tenant.app.app_id, { pool_id: "upgrade-jobs" });
      const { job_id } = await user.call("submitJob", { type: "shell", command: ["true"], pool_id: "upgrade-jobs" });
      await expect.poll(async () => (await node.poll(), node.running.size), { timeout: 10_000 }).toBe(1);
      const key = jobKey(tenant.app.app_id, tenant.business.business_id, job_id);
      await addNewerFields(BUCKETS.jobs, key);
      await node.finish(job_id);
      expect(await stored(BUCKETS.jobs, key)).toMatchObject({ state: "succeeded", ...NEWER });
    },
  },
  [BUCKETS.webhookDeliveries]: {
    operation: "a delivery's try recorded",
    async run() {
      let answer: (status: number) => void = () => undefined;
      const receiver = await startWebhookReceiver(() => new Promise<number>((resolve) => (answer = resolve)));
      try {
        const { webhook } = await user.call("createWebhook", { url: receiver.url, events: ["job.*"] });
        const { delivery_id } = await user.call("testWebhook", { webhook_id: webhook.webhook_id });
        // The POST is held open while the newer fields are added, so the try's write comes after them.
        await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(1);
        const key = `${tenant.app.app_id}.${tenant.business.business_id}.${webhook.webhook_id}.${delivery_id}`;
        await addNewerFields(BUCKETS.webhookDeliveries, key);
        answer(200);
        await expect
          .poll(async () => (await stored(BUCKETS.webhookDeliveries, key)).state, { timeout: 10_000 })
          .toBe("succeeded");
        expect(await stored(BUCKETS.webhookDeliveries, key)).toMatchObject(NEWER);
      } finally {
        await receiver.close();
      }
    },
  },
  [BUCKETS.keyQuotas]: {
    operation: "a second submit admitted with the key",
    async run() {
      const created = await user.call("createApiKey", { name: "upgrade quota", maxConcurrentJobs: 5 });
      const withKey = new ComputeClient({ baseUrl, appId: tenant.app.app_id, apiKey: created.key });
      await withKey.call("submitJob", { type: "shell", command: ["true"], pool_id: "upgrade-quota" });
      await addNewerFields(BUCKETS.keyQuotas, kvKey(created.key_id));
      await withKey.call("submitJob", { type: "shell", command: ["true"], pool_id: "upgrade-quota" });
      const record = await stored(BUCKETS.keyQuotas, kvKey(created.key_id));
      expect(Object.keys(record.active as Raw)).toHaveLength(2);
      expect(record).toMatchObject(NEWER);
    },
  },
  [BUCKETS.apiKeys]: {
    operation: "a revoke",
    async run() {
      const created = await user.call("createApiKey", { name: "upgrade revoke" });
      await addNewerFields(BUCKETS.apiKeys, created.key_id);
      await user.call("revokeApiKey", { key_id: created.key_id });
      expect(await stored(BUCKETS.apiKeys, created.key_id)).toMatchObject({ revoked_at: expect.any(String), ...NEWER });
    },
  },
  [BUCKETS.users]: {
    operation: "a sign-in noting last_sign_in_at",
    async run() {
      const other = await createTenant(nc);
      await addNewerFields(BUCKETS.users, other.user.user_id);
      await signedInClient(baseUrl, other);
      expect(await stored(BUCKETS.users, other.user.user_id)).toMatchObject({
        last_sign_in_at: expect.any(String),
        ...NEWER,
      });
    },
  },
  [BUCKETS.sessions]: {
    operation: "a refresh",
    async run() {
      const { tokens, anonymous } = await signedInClient(baseUrl, tenant);
      const sessionId = tokens.refresh_token.split(".")[0]!;
      await addNewerFields(BUCKETS.sessions, sessionId);
      const before = await stored(BUCKETS.sessions, sessionId);
      await anonymous.call("refresh", { refresh_token: tokens.refresh_token });
      const after = await stored(BUCKETS.sessions, sessionId);
      expect(after.token_hash).not.toBe(before.token_hash);
      expect(after).toMatchObject(NEWER);
    },
  },
  [BUCKETS.otpCodes]: {
    operation: "a wrong code spending a try",
    async run() {
      const other = await createTenant(nc);
      const anonymous = new ComputeClient({ baseUrl, appId: other.app.app_id });
      await anonymous.call("requestOtp", { email: other.user.email });
      const key = await onlyKey(BUCKETS.otpCodes, `${other.app.app_id}.*`);
      await addNewerFields(BUCKETS.otpCodes, key);
      const sent = system.gateways[0]!.outbox.get(other.user.email)!.at(-1)!;
      const wrong = sent === "000000" ? "111111" : "000000";
      const before = await stored(BUCKETS.otpCodes, key);
      expect(await errorCodeOf(anonymous.call("verifyOtp", { email: other.user.email, code: wrong }))).toBe(
        "auth.otp_invalid",
      );
      expect(await stored(BUCKETS.otpCodes, key)).toMatchObject({
        tries_left: (before.tries_left as number) - 1,
        ...NEWER,
      });
    },
  },
  [BUCKETS.loginGuards]: {
    operation: "a second failed sign-in",
    async run() {
      const other = await createTenant(nc);
      const anonymous = new ComputeClient({ baseUrl, appId: other.app.app_id });
      const failLogin = () =>
        errorCodeOf(anonymous.call("login", { email: other.user.email, password: "not the password" }));
      expect(await failLogin()).toBe("auth.login_failed");
      const key = await onlyKey(BUCKETS.loginGuards, `acct.${other.app.app_id}.*`);
      await addNewerFields(BUCKETS.loginGuards, key);
      expect(await failLogin()).toBe("auth.login_failed");
      expect(await stored(BUCKETS.loginGuards, key)).toMatchObject({ failures: 2, ...NEWER });
    },
  },
  [BUCKETS.rateLimits]: {
    operation: "a counted request",
    async run() {
      await user.call("listApiKeys", {});
      const key = kvKey(tenant.app.app_id, tenant.user.user_id);
      await addNewerFields(BUCKETS.rateLimits, key, nestedIn("hour"));
      const before = await stored(BUCKETS.rateLimits, key);
      await user.call("listApiKeys", {});
      const after = await stored(BUCKETS.rateLimits, key);
      expect(nestedOf(after, "hour", "count")).toBeGreaterThan(nestedOf(before, "hour", "count") as number);
      expect(after).toMatchObject(NEWER);
      expect(nestedOf(after, "hour")).toMatchObject(NEWER_NESTED);
    },
  },
  [BUCKETS.creditAccounts]: {
    operation: "a credit set",
    async run() {
      await setCredit(100);
      const key = accountKey(tenant.app.app_id, tenant.business.business_id);
      await addNewerFields(BUCKETS.creditAccounts, key);
      await setCredit(250);
      expect(await stored(BUCKETS.creditAccounts, key)).toMatchObject({ balance_micros: 250_000_000, ...NEWER });
    },
  },
  [BUCKETS.creditEntries]: {
    operation: "a credit set writing out an entry a newer replica left in the account",
    async run() {
      await setCredit(10);
      const key = accountKey(tenant.app.app_id, tenant.business.business_id);
      let seq = 0;
      // The newer replica's entry, left unwritten as if it stopped right after its compare-and-set.
      await addNewerFields(BUCKETS.creditAccounts, key, (account) => {
        seq = (account.last_seq as number) + 1;
        const entry = {
          seq,
          entry_id: `set.newer-${randomBase62(8)}`,
          kind: "set",
          amount_micros: 0,
          balance_after_micros: account.balance_micros,
          job_id: null,
          attempt: null,
          usage: null,
          created_at: new Date().toISOString(),
        };
        account.unwritten = [...(account.unwritten as Raw[]), { ...entry, ...NEWER }];
        account.last_seq = seq;
      });
      await setCredit(20);
      expect(
        await stored(BUCKETS.creditEntries, entryKey(tenant.app.app_id, tenant.business.business_id, seq)),
      ).toMatchObject({ seq, ...NEWER });
      expect((await stored(BUCKETS.creditAccounts, key)).unwritten).toEqual([]);
    },
  },
  [BUCKETS.subscriptions]: {
    operation: "a later provider event",
    async run() {
      expect(await postCheckoutEvent(`evt_upgrade_${randomBase62(12)}`)).toMatchObject({ outcome: "applied" });
      const key = subscriptionKey(tenant.app.app_id, tenant.business.business_id);
      await addNewerFields(BUCKETS.subscriptions, key);
      const later = `evt_upgrade_${randomBase62(12)}`;
      expect(await postCheckoutEvent(later)).toMatchObject({ outcome: "applied" });
      expect(await stored(BUCKETS.subscriptions, key)).toMatchObject({ last_event_id: later, ...NEWER });
    },
  },
  [BUCKETS.webhookEvents]: {
    operation: "the delivery of an event a newer replica received but did not finish",
    async run() {
      const eventId = `evt_upgrade_${randomBase62(12)}`;
      const key = webhookEventKey("sandbox", eventId);
      const now = new Date().toISOString();
      await (await rawBucket(BUCKETS.webhookEvents)).create(key, {
        provider: "sandbox",
        event_id: eventId,
        type: "checkout.completed",
        status: "received",
        received_at: now,
        updated_at: now,
        ...NEWER,
      });
      expect(await postCheckoutEvent(eventId)).toMatchObject({ duplicate: true, outcome: "applied" });
      expect(await stored(BUCKETS.webhookEvents, key)).toMatchObject({ status: "applied", ...NEWER });
    },
  },
  [BUCKETS.idempotency]: {
    operation: "the takeover and answer of a retry a newer replica claimed and never finished",
    async run() {
      const pool = "upgrade-idempotency";
      const node = await FakeNode.register(user, baseUrl, tenant.app.app_id, { pool_id: pool });
      const { job_id } = await user.call("submitJob", { type: "shell", command: ["false"], pool_id: pool });
      await expect.poll(async () => (await node.poll(), node.running.size), { timeout: 10_000 }).toBe(1);
      await node.finish(job_id, "failed");
      const idempotencyKey = `upgrade-${randomBase62(12)}`;
      const key = idempotencyRecordKey(
        { app_id: tenant.app.app_id, business_id: tenant.business.business_id },
        idempotencyKey,
      );
      const path = RPC_ROUTES.retryJob.path;
      // Claimed long ago by a replica that stopped: the next request with the key takes it over.
      const claim = {
        route: path,
        fingerprint: requestFingerprint(path, { job_id }),
        holder: "idem_newer",
        claimed_at: 0,
        job_id: null,
        answer: null,
        ...NEWER,
      };
      await (await rawBucket(BUCKETS.idempotency)).create(key, claim);
      const retried = await user.raw("POST", path, { job_id }, { "idempotency-key": idempotencyKey });
      expect(retried.status).toBe(200);
      expect(await stored(BUCKETS.idempotency, key)).toMatchObject({
        answer: { job: { job_id, state: "queued" } },
        ...NEWER,
      });
    },
  },
  [BUCKETS.checkoutSessions]: {
    operation: "Pay on the sandbox checkout page",
    async run() {
      const { client: admin } = await signedInClient(baseUrl, await createTenant(nc));
      const created = await admin.call("createCheckout", {
        plan_id: "team",
        success_url: "https://app.example.test/done",
        cancel_url: "https://app.example.test/canceled",
      });
      const key = sandboxSessionKey(created.session_id);
      await addNewerFields(BUCKETS.checkoutSessions, key);
      const paid = await fetch(created.checkout_url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ action: "pay" }).toString(),
        redirect: "manual",
      });
      expect(paid.status).toBe(303);
      expect(await stored(BUCKETS.checkoutSessions, key)).toMatchObject({
        state: expect.stringMatching(/^(paid|completed)$/),
        ...NEWER,
      });
    },
  },
  [BUCKETS.signingKeys]: {
    operation: "the operator's key rotation, of both kinds",
    async run() {
      for (const [kind, key] of [
        ["jwt", "current"],
        ["url", "url-hmac"],
      ] as const) {
        await addNewerFields(BUCKETS.signingKeys, key);
        const before = await stored(BUCKETS.signingKeys, key);
        await requestRpc(nc, "adminKeysRotate", { kind });
        const rotated = await stored(BUCKETS.signingKeys, key);
        expect(rotated, kind).not.toEqual(before);
        expect(rotated, kind).toMatchObject(NEWER);
      }
    },
  },
  [BUCKETS.schedules]: {
    operation: "a pause",
    async run() {
      const { schedule } = await user.call("createSchedule", {
        cron: "0 3 * * *",
        job: { type: "shell", command: ["true"], pool_id: "upgrade-schedules" },
      });
      const key = scheduleKey(tenant.app.app_id, tenant.business.business_id, schedule.schedule_id);
      await addNewerFields(BUCKETS.schedules, key, nestedIn("job"));
      await user.call("pauseSchedule", { schedule_id: schedule.schedule_id });
      const paused = await stored(BUCKETS.schedules, key);
      expect(paused).toMatchObject({ state: "paused", ...NEWER });
      expect(nestedOf(paused, "job")).toMatchObject(NEWER_NESTED);
    },
  },
};

describe("records keep the fields a newer replica wrote", () => {
  it("every bucket is either rewritten (and has a case here) or listed as not rewritten", () => {
    const rewritten = Object.keys(REWRITTEN);
    const exempt = Object.keys(NOT_REWRITTEN);
    expect(rewritten.filter((bucket) => exempt.includes(bucket))).toEqual([]);
    expect([...rewritten, ...exempt].sort()).toEqual(Object.values(BUCKETS).sort());
  });

  it.each(Object.entries(REWRITTEN).map(([bucket, { operation, run }]) => ({ bucket, operation, run })))(
    "$bucket: $operation keeps them",
    async ({ run }) => {
      await run();
    },
  );
});
