import { randomBytes } from "node:crypto";
import { Kvm } from "@nats-io/kv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  calendarMonth,
  SubscriptionRecord,
  subscriptionKey,
} from "../../services/billing/subscriptions/subscription-record.js";
import { BillingSecretRecord, SANDBOX_WEBHOOK_SECRET_KEY } from "../../services/billing/checkout/billing-secret.js";
import { sandboxSessionKey, SandboxSessionRecord } from "../../services/billing/checkout/sandbox-session-record.js";
import { signSandboxPayload } from "../../services/billing/checkout/sandbox-signature.js";
import type { ComputeClient } from "../harness/client.js";
import {
  billingWebhookPath,
  SANDBOX_SIGNATURE_HEADER,
  type CreateCheckoutResponse,
} from "../../shared/contract/index.js";
import { BUCKETS, JsonBucket } from "../../shared/nats/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";
import { errorCodeOf } from "../harness/error-code.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import {
  createTenant,
  signedInClient,
  startBilling,
  startGateway,
  type RunningGateway,
  type RunningService,
  type Tenant,
} from "../harness/system.js";

/**
 * Billing end to end with the sandbox payment provider: two gateway replicas and one
 * billing service on a real nats-server. Checkouts are created on one gateway and their
 * page is used on the other.
 */
let nats: NatsHarness;
let gateways: RunningGateway[];
let billing: RunningService;
let subscriptions: JsonBucket<typeof SubscriptionRecord>;
let sessions: JsonBucket<typeof SandboxSessionRecord>;
let sandboxSecret: Buffer;

const SUCCESS_URL = "https://app.example.test/billing/done?session={CHECKOUT_SESSION_ID}";
const CANCEL_URL = "https://app.example.test/billing/canceled";

beforeAll(async () => {
  nats = await startNats();
  gateways = await Promise.all([startGateway(nats.url), startGateway(nats.url)]);
  billing = await startBilling(nats.url);
  const kvm = new Kvm(gateways[0]!.nc);
  subscriptions = new JsonBucket(await kvm.open(BUCKETS.subscriptions), SubscriptionRecord);
  sessions = new JsonBucket(await kvm.open(BUCKETS.checkoutSessions), SandboxSessionRecord);
  const secrets = new JsonBucket(await kvm.open(BUCKETS.billingSecrets), BillingSecretRecord);
  sandboxSecret = Buffer.from((await secrets.get(SANDBOX_WEBHOOK_SECRET_KEY))!.value.secret, "base64url");
});

afterAll(async () => {
  await Promise.all(gateways?.map((gateway) => gateway.stop()) ?? []);
  await billing?.stop();
  await nats?.stop();
});

async function adminOf(role: "admin" | "member" = "admin"): Promise<{ tenant: Tenant; client: ComputeClient }> {
  const tenant = await createTenant(gateways[0]!.nc, { role });
  const { client } = await signedInClient(gateways[0]!.baseUrl, tenant);
  return { tenant, client };
}

/** The checkout page's URL on the other gateway replica. */
function onSecondGateway(checkoutUrl: string): string {
  const url = new URL(checkoutUrl);
  return `${gateways[1]!.baseUrl}${url.pathname}`;
}

async function pressButton(checkoutUrl: string, action: string): Promise<Response> {
  return fetch(onSecondGateway(checkoutUrl), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ action }).toString(),
    redirect: "manual",
  });
}

async function checkout(client: ComputeClient, planId = "team"): Promise<CreateCheckoutResponse> {
  return client.call("createCheckout", { plan_id: planId, success_url: SUCCESS_URL, cancel_url: CANCEL_URL });
}

async function recordOf(tenant: Tenant) {
  return subscriptions.get(subscriptionKey(tenant.app.app_id, tenant.business.business_id));
}

/** Posts a sandbox webhook to the first gateway, exactly as given. */
async function postWebhook(
  body: string,
  signature: string | undefined,
  provider = "sandbox",
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${gateways[0]!.baseUrl}${billingWebhookPath(provider)}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(signature === undefined ? {} : { [SANDBOX_SIGNATURE_HEADER]: signature }),
    },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A sandbox `checkout.completed` event for the tenant's business. */
function checkoutEvent(tenant: Tenant, planId = "team"): string {
  const now = Date.now();
  return JSON.stringify({
    id: `evt_test_${randomBase62(20)}`,
    type: "checkout.completed",
    created: Math.floor(now / 1000),
    data: {
      app_id: tenant.app.app_id,
      business_id: tenant.business.business_id,
      plan_id: planId,
      customer_id: `cus_test_${randomBase62(8)}`,
      subscription_id: `sub_test_${randomBase62(8)}`,
      period_start: new Date(now).toISOString(),
      period_end: new Date(now + 30 * 86_400_000).toISOString(),
      session_ref: null,
    },
  });
}

const nowSeconds = () => Date.now() / 1000;

describe("plans", () => {
  it("plans/list returns every configured plan with id, name, price, currency and interval", async () => {
    const { client } = await adminOf("member");
    const { plans, default_plan_id } = await client.call("listPlans", {});
    expect(plans.map((plan) => plan.id)).toEqual(["free", "team", "scale"]);
    expect(default_plan_id).toBe("free");
    for (const plan of plans) {
      expect(plan).toMatchObject({
        id: expect.any(String),
        name: expect.any(String),
        price: expect.any(Number),
        currency: "usd",
        interval: expect.stringMatching(/^(month|year)$/),
      });
      expect(plan).not.toHaveProperty("stripe_price_id");
    }
    expect(plans.find((plan) => plan.id === "team")).toMatchObject({
      name: "Team",
      price: 49,
      interval: "month",
      included_credit: 500,
    });
  });

  it("plans/list needs a credential", async () => {
    const response = await fetch(`${gateways[1]!.baseUrl}/api/compute/billing/plans/list`, {
      method: "POST",
      headers: { "x-app-id": (await adminOf()).tenant.app.app_id },
    });
    expect(response.status).toBe(401);
  });
});

describe("subscription", () => {
  it("a new business is on the default plan for this calendar month, with the plan's included credit and no usage", async () => {
    const { tenant, client } = await adminOf("member");
    const subscription = await client.call("getSubscription", {});
    const month = calendarMonth(Date.now());
    expect(subscription).toEqual({
      business_id: tenant.business.business_id,
      plan: expect.objectContaining({ id: "free", included_credit: 10 }),
      status: "active",
      current_period_start: month.start,
      current_period_end: month.end,
      credit_balance: 10,
      usage_this_period: 0,
      provider: null,
      cancel_at_period_end: false,
      ends_at: null,
      operator: false,
    });
    expect(await recordOf(tenant)).toBeNull();
  });
});

describe("checkout refusals", () => {
  it("a member of the business is refused with permission.denied, and no session is made", async () => {
    const { tenant, client } = await adminOf("member");
    expect(await errorCodeOf(checkout(client))).toBe("permission.denied");
    expect(await recordOf(tenant)).toBeNull();
    expect((await client.call("getSubscription", {})).plan.id).toBe("free");
  });

  it("an API key is refused: checkout needs a signed-in session", async () => {
    const { client } = await adminOf();
    const { key } = await client.call("createApiKey", { name: "billing" });
    expect(await errorCodeOf(checkout(client.with({ apiKey: key })))).toBe("auth.jwt_required");
  });

  it("an unknown plan answers resource.not_found", async () => {
    const { client } = await adminOf();
    expect(await errorCodeOf(checkout(client, "platinum"))).toBe("resource.not_found");
  });

  it("the free plan answers request.invalid: it needs no checkout", async () => {
    const { client } = await adminOf();
    expect(await errorCodeOf(checkout(client, "free"))).toBe("request.invalid");
  });

  it("success and cancel URLs must be absolute http(s) URLs", async () => {
    const { client } = await adminOf();
    for (const [success_url, cancel_url] of [
      ["/relative", CANCEL_URL],
      [SUCCESS_URL, "javascript:alert(1)"],
      ["ftp://files.example.test/", CANCEL_URL],
    ] as const) {
      const response = await client.raw("POST", "/api/compute/billing/checkout/create", {
        plan_id: "team",
        success_url,
        cancel_url,
      });
      expect(response.status).toBe(400);
      expect((response.body as { code: string }).code).toBe("request.invalid");
    }
  });
});

describe("sandbox checkout", () => {
  it("create → page → Pay sends a signed webhook, the business is on the plan, and the browser goes to success_url", async () => {
    const { tenant, client } = await adminOf();
    const created = await checkout(client);
    expect(created.provider).toBe("sandbox");
    expect(created.session_id).toMatch(/^cs_sandbox_[0-9A-Za-z]{32}$/);
    expect(created.checkout_url).toBe(`${gateways[0]!.baseUrl}/sandbox/checkout/${created.session_id}`);
    expect(Date.parse(created.expires_at)).toBeGreaterThan(Date.now());
    // Nothing changes before the provider says it was paid.
    expect(await recordOf(tenant)).toBeNull();

    const page = await fetch(onSecondGateway(created.checkout_url));
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    const html = await page.text();
    expect(html).toContain("Team");
    expect(html).toContain("49.00 USD");
    expect(html).toMatch(/value="pay"/);
    expect(html).toMatch(/value="cancel"/);

    const paid = await pressButton(created.checkout_url, "pay");
    expect(paid.status).toBe(303);
    expect(paid.headers.get("location")).toBe(SUCCESS_URL.replace("{CHECKOUT_SESSION_ID}", created.session_id));

    const subscription = await client.call("getSubscription", {});
    expect(subscription).toMatchObject({
      business_id: tenant.business.business_id,
      plan: { id: "team" },
      status: "active",
      provider: "sandbox",
      credit_balance: 500,
      usage_this_period: 0,
    });
    expect(Date.parse(subscription.current_period_end)).toBeGreaterThan(Date.parse(subscription.current_period_start));
    const record = (await recordOf(tenant))!.value;
    expect(record).toMatchObject({
      plan_id: "team",
      status: "active",
      provider: "sandbox",
      provider_customer_id: expect.stringMatching(/^cus_sandbox_/),
      provider_subscription_id: expect.stringMatching(/^sub_sandbox_/),
    });
  });

  it("a session is single-use: after Pay, its page and a second Pay are refused and nothing changes", async () => {
    const { tenant, client } = await adminOf();
    const created = await checkout(client);
    expect((await pressButton(created.checkout_url, "pay")).status).toBe(303);
    const before = await recordOf(tenant);

    expect((await fetch(onSecondGateway(created.checkout_url))).status).toBe(409);
    expect((await pressButton(created.checkout_url, "pay")).status).toBe(409);
    expect((await pressButton(created.checkout_url, "cancel")).status).toBe(409);
    expect((await recordOf(tenant))?.revision).toBe(before?.revision);
  });

  it("Cancel goes to cancel_url, changes nothing, and the session takes no payment afterwards", async () => {
    const { tenant, client } = await adminOf();
    const created = await checkout(client);
    const canceled = await pressButton(created.checkout_url, "cancel");
    expect(canceled.status).toBe(303);
    expect(canceled.headers.get("location")).toBe(CANCEL_URL);
    expect((await pressButton(created.checkout_url, "pay")).status).toBe(409);
    expect(await recordOf(tenant)).toBeNull();
    expect((await client.call("getSubscription", {})).plan.id).toBe("free");
  });

  it("an unknown or malformed session id shows not found", async () => {
    for (const id of [`cs_sandbox_${randomBase62(32)}`, "nonsense", "cs_sandbox_short"]) {
      expect((await fetch(`${gateways[1]!.baseUrl}/sandbox/checkout/${id}`)).status).toBe(404);
      expect((await pressButton(`${gateways[1]!.baseUrl}/sandbox/checkout/${id}`, "pay")).status).toBe(404);
    }
  });

  it("an expired session takes no payment", async () => {
    const { tenant, client } = await adminOf();
    const created = await checkout(client);
    const key = sandboxSessionKey(created.session_id);
    const stored = (await sessions.get(key))!;
    await sessions.update(
      key,
      { ...stored.value, expires_at: new Date(Date.now() - 1000).toISOString() },
      stored.revision,
    );
    expect((await fetch(onSecondGateway(created.checkout_url))).status).toBe(409);
    expect((await pressButton(created.checkout_url, "pay")).status).toBe(409);
    expect(await recordOf(tenant)).toBeNull();
  });

  it("the business already on a plan cannot check out the same plan again", async () => {
    const { client } = await adminOf();
    await pressButton((await checkout(client)).checkout_url, "pay");
    expect(await errorCodeOf(checkout(client))).toBe("state.conflict");
  });
});

describe("webhooks", () => {
  it("replaying a delivered sandbox event answers duplicate and changes nothing", async () => {
    const { tenant, client } = await adminOf();
    const created = await checkout(client);
    await pressButton(created.checkout_url, "pay");
    const applied = await recordOf(tenant);
    const event = (await sessions.get(sandboxSessionKey(created.session_id)))!.value.event_body!;

    const replay = await postWebhook(event, signSandboxPayload(sandboxSecret, event, nowSeconds()));
    expect(replay.status).toBe(200);
    expect(replay.body.payload).toMatchObject({ event_id: JSON.parse(event).id, duplicate: true });
    expect((await recordOf(tenant))?.revision).toBe(applied?.revision);
  });

  it("the same event posted twice counts once", async () => {
    const { tenant } = await adminOf();
    const event = checkoutEvent(tenant);
    const first = await postWebhook(event, signSandboxPayload(sandboxSecret, event, nowSeconds()));
    expect(first.body.payload).toMatchObject({ duplicate: false, outcome: "applied" });
    const after = await recordOf(tenant);
    const second = await postWebhook(event, signSandboxPayload(sandboxSecret, event, nowSeconds()));
    expect(second.status).toBe(200);
    expect(second.body.payload).toMatchObject({ duplicate: true, outcome: "applied" });
    expect((await recordOf(tenant))?.revision).toBe(after?.revision);
  });

  it("a forged, altered, expired or missing signature answers 400 webhook.signature_invalid and changes nothing", async () => {
    const { tenant, client } = await adminOf();
    const event = checkoutEvent(tenant);
    const good = signSandboxPayload(sandboxSecret, event, nowSeconds());
    const refusals = [
      await postWebhook(event, signSandboxPayload(randomBytes(32), event, nowSeconds())),
      await postWebhook(event.replace('"plan_id":"team"', '"plan_id":"scale"'), good),
      await postWebhook(event, signSandboxPayload(sandboxSecret, event, nowSeconds() - 3600)),
      await postWebhook(event, undefined),
    ];
    for (const refusal of refusals) {
      expect(refusal.status).toBe(400);
      expect(refusal.body).toMatchObject({ status: "ERROR", code: "webhook.signature_invalid" });
      expect(refusal.body).not.toHaveProperty("payload");
    }
    expect(await recordOf(tenant)).toBeNull();
    expect((await client.call("getSubscription", {})).plan.id).toBe("free");
    // Nothing was recorded either: the same event, properly signed, is new.
    expect((await postWebhook(event, good)).body.payload).toMatchObject({ duplicate: false, outcome: "applied" });
  });

  it("a webhook for a provider that is not enabled answers resource.not_found", async () => {
    const { tenant } = await adminOf();
    const event = checkoutEvent(tenant);
    const answer = await postWebhook(event, signSandboxPayload(sandboxSecret, event, nowSeconds()), "stripe");
    expect(answer.status).toBe(404);
    expect(answer.body.code).toBe("resource.not_found");
    expect(await recordOf(tenant)).toBeNull();
  });

  it("an older event does not overwrite a newer one", async () => {
    const { tenant, client } = await adminOf();
    const newer = checkoutEvent(tenant, "scale");
    const older = JSON.stringify({
      ...JSON.parse(checkoutEvent(tenant, "team")),
      created: Math.floor(nowSeconds()) - 60,
    });
    await postWebhook(newer, signSandboxPayload(sandboxSecret, newer, nowSeconds()));
    const late = await postWebhook(older, signSandboxPayload(sandboxSecret, older, nowSeconds()));
    expect(late.body.payload).toMatchObject({ duplicate: false, outcome: "ignored" });
    expect((await client.call("getSubscription", {})).plan.id).toBe("scale");
  });

  it("a cancellation of the business's subscription puts it back on the default plan", async () => {
    const { tenant, client } = await adminOf();
    await pressButton((await checkout(client)).checkout_url, "pay");
    const record = (await recordOf(tenant))!.value;
    const cancel = JSON.stringify({
      id: `evt_test_${randomBase62(20)}`,
      type: "subscription.canceled",
      created: Math.floor(nowSeconds()) + 1,
      data: {
        app_id: tenant.app.app_id,
        business_id: tenant.business.business_id,
        subscription_id: record.provider_subscription_id,
        ended_at: new Date().toISOString(),
      },
    });
    expect(
      (await postWebhook(cancel, signSandboxPayload(sandboxSecret, cancel, nowSeconds()))).body.payload,
    ).toMatchObject({ outcome: "applied" });
    expect((await recordOf(tenant))!.value.status).toBe("canceled");
    expect(await client.call("getSubscription", {})).toMatchObject({
      plan: { id: "free" },
      status: "active",
      provider: null,
      credit_balance: 10,
    });
  });
});

describe("tenancy", () => {
  it("one business's checkout never changes another's subscription", async () => {
    const first = await adminOf();
    const second = await adminOf();
    const before = await second.client.call("getSubscription", {});
    await pressButton((await checkout(first.client)).checkout_url, "pay");
    expect((await first.client.call("getSubscription", {})).plan.id).toBe("team");
    expect(await second.client.call("getSubscription", {})).toEqual(before);
    expect(await recordOf(second.tenant)).toBeNull();
  });

  it("a second app's business with the same plan is separate", async () => {
    const first = await adminOf();
    await pressButton((await checkout(first.client)).checkout_url, "pay");
    const sameApp = await createTenant(gateways[0]!.nc, { appId: first.tenant.app.app_id });
    const { client } = await signedInClient(gateways[1]!.baseUrl, sameApp);
    expect(await client.call("getSubscription", {})).toMatchObject({
      business_id: sameApp.business.business_id,
      plan: { id: "free" },
      provider: null,
    });
  });
});
