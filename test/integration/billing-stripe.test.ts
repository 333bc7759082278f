import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { pino } from "pino";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildBilling } from "../../services/billing/billing.js";
import { BillingConfig } from "../../services/billing/config.js";
import { SubscriptionRecord, subscriptionKey } from "../../services/billing/subscriptions/subscription-record.js";
import type { ComputeClient } from "../harness/client.js";
import { billingWebhookPath } from "../../shared/contract/index.js";
import { BUCKETS, JsonBucket } from "../../shared/nats/index.js";
import { randomBase62, systemClock } from "../../shared/runtime/index.js";
import { FakeStripe } from "../harness/fake-stripe.js";
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
 * The Stripe adapter without the internet: the official client is pointed at a local
 * HTTP server that plays Stripe's Checkout Sessions endpoint (`FakeStripe`), and webhooks are signed with
 * the client's own test helper, as Stripe signs them.
 */
const WEBHOOK_SECRET = `whsec_${randomBase62(32)}`;
const PLANS = {
  default_plan: "free",
  plans: [
    {
      id: "free",
      name: "Free",
      price: 0,
      currency: "usd",
      interval: "month",
      included_credit: 10,
      rates: { cpu_core_hour: 1, memory_gb_hour: 0.1, gpu_hour: 20 },
      limits: { max_job_timeout_seconds: 3600, max_job_cpu: 2 },
      billed: true,
    },
    {
      id: "team",
      name: "Team",
      price: 49,
      currency: "usd",
      interval: "month",
      included_credit: 500,
      rates: { cpu_core_hour: 0.8, memory_gb_hour: 0.08, gpu_hour: 16 },
      limits: { max_job_timeout_seconds: 86400, max_job_cpu: 16 },
      billed: true,
      stripe_price_id: "price_team_monthly",
    },
    {
      id: "scale",
      name: "Scale",
      price: 4900,
      currency: "usd",
      interval: "year",
      included_credit: 60000,
      rates: { cpu_core_hour: 0.6, memory_gb_hour: 0.06, gpu_hour: 12 },
      limits: { max_job_timeout_seconds: 604800, max_job_cpu: 64 },
      billed: true,
      stripe_price_id: "price_scale_yearly",
    },
  ],
};

let nats: NatsHarness;
let gateways: RunningGateway[];
let billing: RunningService;
let stripeApi: FakeStripe;
let plansDir: string;
let plansFile: string;
let subscriptions: JsonBucket<typeof SubscriptionRecord>;
const stripe = new Stripe("sk_test_unused");

beforeAll(async () => {
  nats = await startNats();
  stripeApi = new FakeStripe();
  const apiUrl = await stripeApi.start();
  plansDir = await mkdtemp(join(tmpdir(), "billing-plans-"));
  plansFile = join(plansDir, "plans.json");
  await writeFile(plansFile, JSON.stringify(PLANS));
  gateways = await Promise.all([startGateway(nats.url), startGateway(nats.url)]);
  billing = await startBilling(nats.url, {
    CJS_STRIPE_SECRET_KEY: "sk_test_local_fake",
    CJS_STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    CJS_STRIPE_API_URL: apiUrl,
    CJS_BILLING_PLANS_FILE: plansFile,
  });
  subscriptions = new JsonBucket(await new Kvm(gateways[0]!.nc).open(BUCKETS.subscriptions), SubscriptionRecord);
});

afterAll(async () => {
  await Promise.all(gateways?.map((gateway) => gateway.stop()) ?? []);
  await billing?.stop();
  await stripeApi?.stop();
  await nats?.stop();
  if (plansDir) await rm(plansDir, { recursive: true, force: true });
});

async function admin(): Promise<{ tenant: Tenant; client: ComputeClient }> {
  const tenant = await createTenant(gateways[0]!.nc);
  return { tenant, client: (await signedInClient(gateways[0]!.baseUrl, tenant)).client };
}

/** Posts a Stripe event to the second gateway, signed as Stripe signs it (or with `signature` as given). */
async function deliver(
  event: Record<string, unknown>,
  signature?: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = JSON.stringify(event);
  const header = signature ?? stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
  const response = await fetch(`${gateways[1]!.baseUrl}${billingWebhookPath("stripe")}`, {
    method: "POST",
    headers: { "content-type": "application/json", "stripe-signature": header },
    body: payload,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function stripeEvent(
  type: string,
  object: Record<string, unknown>,
  createdSeconds = Math.floor(Date.now() / 1000),
): Record<string, unknown> {
  return {
    id: `evt_${randomBase62(24)}`,
    object: "event",
    api_version: "2025-01-01",
    created: createdSeconds,
    type,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: { object },
  };
}

function metadataOf(tenant: Tenant, planId: string) {
  return { app_id: tenant.app.app_id, business_id: tenant.business.business_id, plan_id: planId };
}

async function recordOf(tenant: Tenant) {
  return subscriptions.get(subscriptionKey(tenant.app.app_id, tenant.business.business_id));
}

describe("Stripe checkout", () => {
  it("creates a Checkout Session in subscription mode for the plan's price, with the business and plan in its metadata", async () => {
    const { tenant, client } = await admin();
    const created = await client.call("createCheckout", {
      plan_id: "team",
      success_url: "https://app.example.test/ok",
      cancel_url: "https://app.example.test/no",
    });
    expect(created.provider).toBe("stripe");
    expect(created.session_id).toMatch(/^cs_test_/);
    expect(created.checkout_url).toBe(`https://checkout.stripe.test/c/pay/${created.session_id}`);

    const call = stripeApi.calls.at(-1)!;
    expect(call.path).toBe("/v1/checkout/sessions");
    expect(call.authorization).toBe("Bearer sk_test_local_fake");
    expect(call.form.get("mode")).toBe("subscription");
    expect(call.form.get("line_items[0][price]")).toBe("price_team_monthly");
    expect(call.form.get("line_items[0][quantity]")).toBe("1");
    expect(call.form.get("success_url")).toBe("https://app.example.test/ok");
    expect(call.form.get("cancel_url")).toBe("https://app.example.test/no");
    for (const prefix of ["metadata", "subscription_data[metadata]"]) {
      expect(call.form.get(`${prefix}[app_id]`)).toBe(tenant.app.app_id);
      expect(call.form.get(`${prefix}[business_id]`)).toBe(tenant.business.business_id);
      expect(call.form.get(`${prefix}[plan_id]`)).toBe("team");
    }
    // Creating a checkout changes nothing.
    expect(await recordOf(tenant)).toBeNull();
  });
});

describe("Stripe webhooks", () => {
  it("a signed checkout.session.completed puts the business on the plan; the same event again changes nothing", async () => {
    const { tenant, client } = await admin();
    const event = stripeEvent("checkout.session.completed", {
      id: `cs_test_${randomBase62(24)}`,
      object: "checkout.session",
      mode: "subscription",
      customer: "cus_test_1",
      subscription: "sub_test_1",
      metadata: metadataOf(tenant, "team"),
    });
    const first = await deliver(event);
    expect(first.status).toBe(200);
    expect(first.body.payload).toEqual({ event_id: event.id, duplicate: false, outcome: "applied" });
    expect(await client.call("getSubscription", {})).toMatchObject({
      plan: { id: "team" },
      status: "active",
      provider: "stripe",
      credit_balance: 500,
    });
    const applied = await recordOf(tenant);
    expect(applied?.value).toMatchObject({
      provider_customer_id: "cus_test_1",
      provider_subscription_id: "sub_test_1",
    });

    const again = await deliver(event);
    expect(again.status).toBe(200);
    expect(again.body.payload).toMatchObject({ duplicate: true });
    expect((await recordOf(tenant))?.revision).toBe(applied?.revision);
  });

  it("customer.subscription.updated renews the period and follows the subscription's price; deleted ends it", async () => {
    const { tenant, client } = await admin();
    const now = Math.floor(Date.now() / 1000);
    await deliver(
      stripeEvent(
        "checkout.session.completed",
        {
          id: "cs_test_x",
          object: "checkout.session",
          mode: "subscription",
          customer: "cus_test_2",
          subscription: "sub_test_2",
          metadata: metadataOf(tenant, "team"),
        },
        now,
      ),
    );

    const start = now - 60;
    const end = start + 365 * 86_400;
    const subscription = (status: string) => ({
      id: "sub_test_2",
      object: "subscription",
      status,
      customer: "cus_test_2",
      metadata: metadataOf(tenant, "team"),
      items: {
        object: "list",
        data: [
          { id: "si_1", price: { id: "price_scale_yearly" }, current_period_start: start, current_period_end: end },
        ],
      },
    });
    const updated = await deliver(stripeEvent("customer.subscription.updated", subscription("active"), now + 1));
    expect(updated.body.payload).toMatchObject({ outcome: "applied" });
    expect(await client.call("getSubscription", {})).toMatchObject({
      plan: { id: "scale" },
      status: "active",
      current_period_start: new Date(start * 1000).toISOString(),
      current_period_end: new Date(end * 1000).toISOString(),
    });

    const pastDue = await deliver(stripeEvent("customer.subscription.updated", subscription("past_due"), now + 2));
    expect(pastDue.body.payload).toMatchObject({ outcome: "applied" });
    expect((await client.call("getSubscription", {})).status).toBe("past_due");

    const deleted = await deliver(
      stripeEvent(
        "customer.subscription.deleted",
        { ...subscription("canceled"), ended_at: Math.floor(Date.now() / 1000) },
        now + 3,
      ),
    );
    expect(deleted.body.payload).toMatchObject({ outcome: "applied" });
    expect(await client.call("getSubscription", {})).toMatchObject({
      plan: { id: "free" },
      status: "active",
      provider: null,
    });
  });

  it("an event about another subscription than the business's changes nothing", async () => {
    const { tenant } = await admin();
    await deliver(
      stripeEvent("checkout.session.completed", {
        id: "cs_test_y",
        object: "checkout.session",
        mode: "subscription",
        customer: "cus_test_3",
        subscription: "sub_current",
        metadata: metadataOf(tenant, "team"),
      }),
    );
    const before = await recordOf(tenant);
    const old = await deliver(
      stripeEvent(
        "customer.subscription.deleted",
        {
          id: "sub_old",
          object: "subscription",
          status: "canceled",
          customer: "cus_test_3",
          metadata: metadataOf(tenant, "team"),
          ended_at: Math.floor(Date.now() / 1000),
        },
        Math.floor(Date.now() / 1000) + 5,
      ),
    );
    expect(old.body.payload).toMatchObject({ outcome: "ignored" });
    expect((await recordOf(tenant))?.revision).toBe(before?.revision);
  });

  it("an event type billing does not act on is acknowledged and changes nothing", async () => {
    const answer = await deliver(stripeEvent("invoice.created", { id: "in_1", object: "invoice" }));
    expect(answer.status).toBe(200);
    expect(answer.body.payload).toMatchObject({ outcome: "ignored" });
  });

  it("a wrong secret, an altered body or an old signature answers 400 webhook.signature_invalid and changes nothing", async () => {
    const { tenant } = await admin();
    const event = stripeEvent("checkout.session.completed", {
      id: "cs_test_z",
      object: "checkout.session",
      mode: "subscription",
      customer: "cus_z",
      subscription: "sub_z",
      metadata: metadataOf(tenant, "team"),
    });
    const payload = JSON.stringify(event);
    const signatures = [
      stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_not_ours" }),
      stripe.webhooks.generateTestHeaderString({
        payload: payload.replace('"team"', '"scale"'),
        secret: WEBHOOK_SECRET,
      }),
      stripe.webhooks.generateTestHeaderString({
        payload,
        secret: WEBHOOK_SECRET,
        timestamp: Math.floor(Date.now() / 1000) - 3600,
      }),
      "t=1,v1=nonsense",
    ];
    for (const signature of signatures) {
      const refusal = await deliver(event, signature);
      expect(refusal.status).toBe(400);
      expect(refusal.body.code).toBe("webhook.signature_invalid");
    }
    expect(await recordOf(tenant)).toBeNull();
  });

  it("the sandbox's webhook endpoint is off while Stripe is the provider", async () => {
    const response = await fetch(`${gateways[0]!.baseUrl}${billingWebhookPath("sandbox")}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(response.status).toBe(404);
  });
});

describe("Stripe settings", () => {
  it("billing does not start when Stripe is on and a paid plan has no Stripe price", async () => {
    const bare = { ...PLANS, plans: PLANS.plans.map(({ stripe_price_id: _price, ...plan }) => plan) };
    const bareFile = join(plansDir, "bare.json");
    await writeFile(bareFile, JSON.stringify(bare));
    const nc = await connect({ servers: nats.url });
    try {
      const config = BillingConfig.parse({
        NATS_URL: nats.url,
        CJS_STRIPE_SECRET_KEY: "sk_test_x",
        CJS_STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        CJS_BILLING_PLANS_FILE: bareFile,
      });
      const service = buildBilling({ nc, config, clock: systemClock, logger: pino({ level: "silent" }) });
      await expect(service.start()).rejects.toThrow(/team, scale/);
      expect(service.ready()).toBe(false);
    } finally {
      await nc.close();
    }
  });

  it("a Stripe key without the webhook signing secret is a configuration error", () => {
    const parsed = BillingConfig.safeParse({ CJS_STRIPE_SECRET_KEY: "sk_test_x" });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path.join("."))).toEqual(["CJS_STRIPE_WEBHOOK_SECRET"]);
  });
});

describe("Stripe subscription cancel", () => {
  /** A business on the team plan through Stripe subscription `subscriptionId`, renewing monthly. */
  async function subscribed(subscriptionId: string) {
    const { tenant, client } = await admin();
    const now = Math.floor(Date.now() / 1000);
    const subscription = (overrides: Record<string, unknown> = {}) => ({
      id: subscriptionId,
      object: "subscription",
      status: "active",
      customer: "cus_test_cancel",
      cancel_at_period_end: false,
      metadata: metadataOf(tenant, "team"),
      items: {
        object: "list",
        data: [
          {
            id: "si_1",
            price: { id: "price_team_monthly" },
            current_period_start: now - 60,
            current_period_end: now + 30 * 86_400,
          },
        ],
      },
      ...overrides,
    });
    await deliver(stripeEvent("customer.subscription.created", subscription(), now - 10));
    expect((await client.call("getSubscription", {})).plan.id).toBe("team");
    return { tenant, client, subscription, now };
  }

  it("asks Stripe to cancel at period end; the subscription shows it, and an older Stripe event does not undo it", async () => {
    const { tenant, client, subscription, now } = await subscribed("sub_cancel_1");
    const cancelled = await client.call("cancelSubscription", {});
    expect(cancelled).toMatchObject({
      plan: { id: "team" },
      cancel_at_period_end: true,
      ends_at: new Date((now + 30 * 86_400) * 1000).toISOString(),
    });
    const call = stripeApi.calls.find((entry) => entry.path === "/v1/subscriptions/sub_cancel_1");
    expect(call).toMatchObject({ method: "POST", authorization: "Bearer sk_test_local_fake" });
    expect(call?.form.get("cancel_at_period_end")).toBe("true");

    // An update Stripe made before the cancel, delivered after it, does not undo it; Stripe's own update then says the same.
    expect(
      (await deliver(stripeEvent("customer.subscription.updated", subscription(), now - 5))).body.payload,
    ).toMatchObject({ outcome: "applied" });
    expect((await recordOf(tenant))?.value.cancel_at_period_end).toBe(true);
    expect(
      (
        await deliver(
          stripeEvent("customer.subscription.updated", subscription({ cancel_at_period_end: true }), now + 5),
        )
      ).body.payload,
    ).toMatchObject({ outcome: "applied" });
    expect((await recordOf(tenant))?.value.cancel_at_period_end).toBe(true);

    // At the period's end Stripe deletes the subscription: the business is on the default plan.
    await deliver(
      stripeEvent(
        "customer.subscription.deleted",
        {
          ...subscription({ status: "canceled", cancel_at_period_end: true }),
          ended_at: Math.floor(Date.now() / 1000),
        },
        now + 6,
      ),
    );
    expect(await client.call("getSubscription", {})).toMatchObject({
      plan: { id: "free" },
      provider: null,
      cancel_at_period_end: false,
      ends_at: null,
    });
  });

  it("resuming in Stripe (cancel_at_period_end false, after the cancel) renews again", async () => {
    const { client, subscription } = await subscribed("sub_cancel_2");
    await client.call("cancelSubscription", {});
    await deliver(stripeEvent("customer.subscription.updated", subscription(), Math.floor(Date.now() / 1000) + 5));
    expect(await client.call("getSubscription", {})).toMatchObject({
      plan: { id: "team" },
      cancel_at_period_end: false,
      ends_at: null,
    });
  });

  it("a cancel Stripe refuses answers 503 and leaves the subscription renewing", async () => {
    const { tenant, client } = await subscribed("sub_cancel_3");
    const before = await recordOf(tenant);
    stripeApi.refuseSubscriptionUpdates = true;
    try {
      const response = await client.raw("POST", "/api/compute/billing/subscription/cancel", {});
      expect(response.status).toBe(503);
      expect((response.body as { code?: string }).code).toBe("service.unavailable");
    } finally {
      stripeApi.refuseSubscriptionUpdates = false;
    }
    expect((await recordOf(tenant))?.revision).toBe(before?.revision);
  });
});
