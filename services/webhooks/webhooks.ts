import { randomUUID } from "node:crypto";
import type { Subscription } from "@nats-io/transport-node";
import {
  BUCKETS,
  CONSUMERS,
  kvStreams,
  queueGroups,
  serveRpc,
  servePing,
  STREAMS,
  watchConsumers,
} from "../../shared/nats/index.js";
import type { ServiceDeps } from "../../shared/process/index.js";
import type { Service } from "../../shared/runtime/index.js";
import type { WebhooksConfig } from "./config.js";
import { createWebhook } from "./create-webhook.js";
import { deleteWebhook } from "./delete-webhook.js";
import { type DeliveryWorker, startDeliveryWorker } from "./delivery-worker.js";
import { type EventFeed, startEventFeed } from "./event-feed.js";
import { listDeliveries } from "./list-deliveries.js";
import { listWebhooks } from "./list-webhooks.js";
import { retryDelivery } from "./retry-delivery.js";
import { testWebhook } from "./test-webhook.js";
import { openWebhooksContext } from "./webhooks-context.js";

const SERVICE = "webhooks";

/**
 * Builds the webhooks service, the owner of outgoing webhooks: it answers their RPCs,
 * turns job record revisions of the businesses that have webhooks into signed deliveries,
 * and POSTs them with retries. It reads the job records' stream and nothing on the job
 * path waits for it, so a slow receiver never slows a job.
 */
export function buildWebhooks(deps: ServiceDeps<WebhooksConfig>): Service {
  const { nc, logger, config } = deps;
  const instance = randomUUID();
  const subscriptions: Subscription[] = [];
  let feed: EventFeed | undefined;
  let worker: DeliveryWorker | undefined;
  let consumers: { stop(): void } | undefined;
  let started = false;
  let stopped = false;
  return {
    name: SERVICE,
    async start() {
      const ctx = await openWebhooksContext(deps);
      const events = await startEventFeed(ctx);
      feed = events;
      // A change already stored stands even when the filter update fails: the feed's periodic refresh applies it.
      ctx.refreshEventFilter = () =>
        events
          .refresh()
          .catch((error: unknown) =>
            logger.warn({ err: error }, "could not update the webhook event filter; the next refresh will"),
          );
      worker = await startDeliveryWorker(ctx);
      const rpc = { queue: queueGroups.webhooks, logger };
      subscriptions.push(
        servePing(nc, { service: SERVICE, instance, logger }),
        serveRpc(nc, "webhookCreate", { ...rpc, handle: createWebhook(ctx) }),
        serveRpc(nc, "webhookList", { ...rpc, handle: listWebhooks(ctx) }),
        serveRpc(nc, "webhookDelete", { ...rpc, handle: deleteWebhook(ctx) }),
        serveRpc(nc, "webhookTest", { ...rpc, handle: testWebhook(ctx) }),
        serveRpc(nc, "webhookDeliveriesList", { ...rpc, handle: listDeliveries(ctx) }),
        serveRpc(nc, "webhookDeliveryRetry", { ...rpc, handle: retryDelivery(ctx) }),
      );
      // The backlogs, for /metrics: job revisions not yet turned into deliveries, and deliveries not yet done.
      consumers = watchConsumers(
        nc,
        [
          { stream: kvStreams.name(BUCKETS.jobs), consumer: CONSUMERS.webhookEvents },
          { stream: STREAMS.webhookDeliveries, consumer: CONSUMERS.webhookDeliveries },
        ],
        { intervalMs: config.CJS_JETSTREAM_PROBE_INTERVAL_MS },
      );
      // Ready only once the server knows the subscriptions.
      await nc.flush();
      started = true;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      consumers?.stop();
      await Promise.all(subscriptions.map((subscription) => subscription.drain()));
      await worker?.stop();
      await feed?.stop();
    },
    ready: () => started && !stopped,
  };
}
