import { Kvm } from "@nats-io/kv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BillingSecretRecord, SANDBOX_WEBHOOK_SECRET_KEY } from "../../services/billing/checkout/billing-secret.js";
import { signSandboxPayload } from "../../services/billing/checkout/sandbox-signature.js";
import { SubscriptionRecord, subscriptionKey } from "../../services/billing/subscriptions/subscription-record.js";
import type { ComputeClient } from "../harness/client.js";
import { billingWebhookPath, RPC_ROUTES, SANDBOX_SIGNATURE_HEADER } from "../../shared/contract/index.js";
import { BUCKETS, JsonBucket, requestRpc } from "../../shared/nats/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";
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
 * `billing/subscription/cancel` end to end with the sandbox payment provider: a plan is
 * bought through the sandbox's checkout page, cancelled, and ends at its period's end.
 */
let nats: NatsHarness;
let gateways: RunningGateway[];
let billing: RunningService;
let subscriptions: JsonBucket<typeof SubscriptionRecord>;
let sandboxSecret: Buffer;

beforeAll(async () => {
  nats = await startNats();
  gateways = await Promise.all([startGateway(nats.url), startGateway(nats.url)]);
  billing = await startBilling(nats.url);
  const kvm = new Kvm(gateways[0]!.nc);
  subscriptions = new JsonBucket(await kvm.open(BUCKETS.subscriptions), SubscriptionRecord);
  const secrets = new JsonBucket(await kvm.open(BUCKETS.billingSecrets), BillingSecretRecord);
  sandboxSecret = Buffer.from((await secrets.get(SANDBOX_WEBHOOK_SECRET_KEY))!.value.secret, "base64url");
});

afterAll(async () => {
  await Promise.all(gateways?.map((gateway) => gateway.stop()) ?? []);
  await billing?.stop();
  await nats?.stop();
});

async function signIn(tenant: Tenant): Promise<ComputeClient> {
  return (await signedInClient(gateways[0]!.baseUrl, tenant)).client;
}

/** A business on the team plan, bought by pressing Pay on the sandbox's checkout page. */
async function subscribedAdmin(): Promise<{ tenant: Tenant; client: ComputeClient }> {
  const tenant = await createTenant(gateways[0]!.nc);
  const client = await signIn(tenant);
  const { checkout_url } = await client.call("createCheckout", {
    plan_id: "team",
    success_url: "https://app.example.test/done",
    cancel_url: "https://app.example.test/back",
  });
  const paid = await fetch(`${gateways[1]!.baseUrl}${new URL(checkout_url).pathname}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "action=pay",
    redirect: "manual",
  });
  expect(paid.status).toBe(303);
  expect((await client.call("getSubscription", {})).plan.id).toBe("team");
  return { tenant, client };
}

async function recordOf(tenant: Tenant) {
  return subscriptions.get(subscriptionKey(tenant.app.app_id, tenant.business.business_id));
}

async function refusal(client: ComputeClient) {
  const response = await client.raw("POST", RPC_ROUTES.cancelSubscription.path, {});
  const envelope = response.body as { code?: unknown; details?: unknown };
  return { status: response.status, code: envelope.code, details: envelope.details };
}

/** Posts a sandbox event, signed with the sandbox's secret, as the sandbox provider sends them. */
async function sendSandboxEvent(type: string, data: Record<string, unknown>): Promise<number> {
  const body = JSON.stringify({
    id: `evt_test_${randomBase62(20)}`,
    type,
    created: Math.floor(Date.now() / 1000),
    data,
  });
  const response = await fetch(`${gateways[0]!.baseUrl}${billingWebhookPath("sandbox")}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      [SANDBOX_SIGNATURE_HEADER]: signSandboxPayload(sandboxSecret, body, Date.now() / 1000),
    },
    body,
  });
  return response.status;
}

describe("billing/subscription/cancel with the sandbox provider", () => {
  it("sets the subscription to end at its period's end; it shows so and stays on its plan until then", async () => {
    const { client } = await subscribedAdmin();
    const before = await client.call("getSubscription", {});
    expect(before).toMatchObject({ cancel_at_period_end: false, ends_at: null });

    const cancelled = await client.call("cancelSubscription", {});
    expect(cancelled).toMatchObject({
      plan: { id: "team" },
      status: "active",
      cancel_at_period_end: true,
      ends_at: before.current_period_end,
      current_period_end: before.current_period_end,
    });
    expect(await client.call("getSubscription", {})).toMatchObject({
      plan: { id: "team" },
      cancel_at_period_end: true,
      ends_at: before.current_period_end,
    });

    expect(await refusal(client)).toEqual({ status: 409, code: "state.conflict", details: { state: "canceling" } });
  });

  it("at the period's end the business is on the default plan", async () => {
    const { tenant, client } = await subscribedAdmin();
    await client.call("cancelSubscription", {});
    const record = (await recordOf(tenant))!.value;
    // The provider renews nothing; its event for the period that has now run out carries no renewal.
    const ended = Date.now() - 1000;
    const status = await sendSandboxEvent("subscription.updated", {
      app_id: tenant.app.app_id,
      business_id: tenant.business.business_id,
      plan_id: "team",
      status: "active",
      subscription_id: record.provider_subscription_id,
      period_start: new Date(ended - 30 * 86_400_000).toISOString(),
      period_end: new Date(ended).toISOString(),
    });
    expect(status).toBe(200);
    expect(await client.call("getSubscription", {})).toMatchObject({
      plan: { id: "free" },
      status: "active",
      provider: null,
      cancel_at_period_end: false,
      ends_at: null,
    });
    expect(await refusal(client)).toEqual({ status: 409, code: "state.conflict", details: { state: "default_plan" } });
  });

  it("a business on the default plan, or one whose subscription was canceled, cannot cancel: 409", async () => {
    const onDefault = await signIn(await createTenant(gateways[0]!.nc));
    expect(await refusal(onDefault)).toEqual({
      status: 409,
      code: "state.conflict",
      details: { state: "default_plan" },
    });

    const { tenant, client } = await subscribedAdmin();
    const record = (await recordOf(tenant))!.value;
    const status = await sendSandboxEvent("subscription.canceled", {
      app_id: tenant.app.app_id,
      business_id: tenant.business.business_id,
      subscription_id: record.provider_subscription_id,
      ended_at: new Date().toISOString(),
    });
    expect(status).toBe(200);
    expect(await refusal(client)).toEqual({ status: 409, code: "state.conflict", details: { state: "default_plan" } });
  });

  it("a member of the business is refused with 403 and nothing changes", async () => {
    const { tenant } = await subscribedAdmin();
    const member = await createTenantUser(tenant, "member");
    const before = await recordOf(tenant);
    expect(await refusal(member)).toMatchObject({ status: 403, code: "permission.denied" });
    expect((await recordOf(tenant))?.revision).toBe(before?.revision);
  });

  it("another business of the same app, or another app, cancels only its own subscription: the first one's is untouched", async () => {
    const { tenant } = await subscribedAdmin();
    const before = await recordOf(tenant);
    for (const other of [
      await createTenant(gateways[0]!.nc, { appId: tenant.app.app_id }),
      await createTenant(gateways[0]!.nc),
    ]) {
      expect(await refusal(await signIn(other))).toEqual({
        status: 409,
        code: "state.conflict",
        details: { state: "default_plan" },
      });
    }
    expect((await recordOf(tenant))?.revision).toBe(before?.revision);
    expect((await recordOf(tenant))?.value.cancel_at_period_end).toBe(false);
  });
});

/** A second user of the tenant's business, with `role`. */
async function createTenantUser(tenant: Tenant, role: "admin" | "member"): Promise<ComputeClient> {
  const password = `pw-${randomBase62(20)}`;
  const user = await requestRpc(gateways[0]!.nc, "adminUserCreate", {
    app_id: tenant.app.app_id,
    business_id: tenant.business.business_id,
    email: `member-${randomBase62(8).toLowerCase()}@example.test`,
    password,
    role,
  });
  return signIn({ ...tenant, user, password });
}
