import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { errorCodeOf } from "../harness/error-code.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem } from "../harness/system.js";
import { documentedVerifier } from "../harness/webhook-verifier.js";
import { startWebhookReceiver, type WebhookReceiver } from "../harness/webhook-receiver.js";

/**
 * A delivery that has ended, sent again by hand (`webhooks/deliveries/retry`): it goes
 * back to pending, is POSTed again, signed afresh, under the same event and delivery ids.
 * A retry window of one second makes a first failure final at once.
 */
const ENV = { CJS_WEBHOOK_RETRY_SCHEDULE_SECONDS: "1", CJS_WEBHOOK_RETRY_WINDOW_SECONDS: "1" };
const WAIT = { timeout: 20_000 };
const verify = documentedVerifier();

let nats: NatsHarness;
let system: RunningSystem;
let user: ComputeClient;
let other: ComputeClient;
let target: WebhookReceiver;
/** What the receiver answers next. */
let status = 500;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 }, ENV);
  const baseUrl = system.gateways[0]!.baseUrl;
  ({ client: user } = await signedInClient(baseUrl, await createTenant(system.gateways[0]!.nc)));
  ({ client: other } = await signedInClient(baseUrl, await createTenant(system.gateways[0]!.nc)));
  target = await startWebhookReceiver(() => status);
});

afterAll(async () => {
  await target?.close();
  await system?.stop();
  await nats?.stop();
});

const deliveryOf = async (webhookId: string, deliveryId: string) =>
  (await user.call("listWebhookDeliveries", { webhook_id: webhookId })).items.find(
    (delivery) => delivery.delivery_id === deliveryId,
  );

describe("sending a delivery again", () => {
  it("a failed delivery sent again is POSTed once more, signed, under the same ids, and ends as that try answers", async () => {
    const { webhook, secret } = await user.call("createWebhook", { url: target.url, events: ["job.*"] });
    const { delivery_id, event_id } = await user.call("testWebhook", { webhook_id: webhook.webhook_id });
    await expect.poll(async () => (await deliveryOf(webhook.webhook_id, delivery_id))?.state, WAIT).toBe("failed");
    expect(target.received).toHaveLength(1);

    status = 200;
    const again = await user.call("retryWebhookDelivery", { webhook_id: webhook.webhook_id, delivery_id });
    expect(again.delivery).toMatchObject({ delivery_id, event_id, state: "pending", attempts: [{ status_code: 500 }] });
    expect(again.delivery).not.toHaveProperty("event");

    await expect.poll(async () => (await deliveryOf(webhook.webhook_id, delivery_id))?.state, WAIT).toBe("succeeded");
    const delivery = await deliveryOf(webhook.webhook_id, delivery_id);
    expect(delivery!.attempts.map((attempt) => attempt.status_code)).toEqual([500, 200]);
    expect(delivery!.next_attempt_at).toBeNull();
    expect(target.received).toHaveLength(2);
    const resent = target.received[1]!;
    expect(resent.headers["cjs-event-id"]).toBe(event_id);
    expect(resent.headers["cjs-delivery-id"]).toBe(delivery_id);
    expect(resent.body).toBe(target.received[0]!.body);
    expect(verify(secret, String(resent.headers["cjs-signature"]), resent.body)).toBe(true);

    // A succeeded delivery may be sent again too: one more POST, still succeeded.
    await user.call("retryWebhookDelivery", { webhook_id: webhook.webhook_id, delivery_id });
    await expect.poll(() => target.received.length, WAIT).toBe(3);
    await expect.poll(async () => (await deliveryOf(webhook.webhook_id, delivery_id))?.attempts.length, WAIT).toBe(3);
    expect((await deliveryOf(webhook.webhook_id, delivery_id))?.state).toBe("succeeded");
  });

  it("a delivery still being tried is 409; another business's, or one that does not exist, is 404 and unchanged", async () => {
    let release: (code: number) => void = () => undefined;
    const held = await startWebhookReceiver(() => new Promise<number>((resolve) => (release = resolve)));
    try {
      const { webhook } = await user.call("createWebhook", { url: held.url, events: ["job.*"] });
      const { delivery_id } = await user.call("testWebhook", { webhook_id: webhook.webhook_id });
      const ref = { webhook_id: webhook.webhook_id, delivery_id };
      expect(await errorCodeOf(user.call("retryWebhookDelivery", ref))).toBe("state.conflict");
      expect(await errorCodeOf(other.call("retryWebhookDelivery", ref))).toBe("resource.not_found");
      expect(
        await errorCodeOf(
          user.call("retryWebhookDelivery", { ...ref, delivery_id: "dlv_00000000000000000000000000000000" }),
        ),
      ).toBe("resource.not_found");
      await expect.poll(() => held.received.length, WAIT).toBe(1);
      release(200);
      await expect.poll(async () => (await deliveryOf(webhook.webhook_id, delivery_id))?.state, WAIT).toBe("succeeded");
      expect(held.received).toHaveLength(1);
    } finally {
      await held.close();
    }
  });
});
