import type { NatsConnection } from "@nats-io/transport-node";
import { BUCKETS, ensureBuckets, JsonBucket, type TopologyOptions } from "../../shared/nats/index.js";
import { BillingSecretRecord } from "./checkout/billing-secret.js";
import { SandboxSessionRecord } from "./checkout/sandbox-session-record.js";
import { WebhookEventRecord } from "./checkout/webhook-event-record.js";
import { SubscriptionRecord } from "./subscriptions/subscription-record.js";

/** Provisions billing's buckets: subscriptions, received provider events, sandbox sessions, its own secrets. */
export async function openBillingStore(nc: NatsConnection, topology: TopologyOptions) {
  const kv = await ensureBuckets(
    nc,
    [BUCKETS.subscriptions, BUCKETS.webhookEvents, BUCKETS.checkoutSessions, BUCKETS.billingSecrets],
    topology,
  );
  return {
    subscriptions: new JsonBucket(kv[BUCKETS.subscriptions], SubscriptionRecord),
    webhookEvents: new JsonBucket(kv[BUCKETS.webhookEvents], WebhookEventRecord),
    checkoutSessions: new JsonBucket(kv[BUCKETS.checkoutSessions], SandboxSessionRecord),
    secrets: new JsonBucket(kv[BUCKETS.billingSecrets], BillingSecretRecord),
  };
}

export type BillingStore = Awaited<ReturnType<typeof openBillingStore>>;
