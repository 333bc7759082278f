import { BUCKETS, CONSUMERS, kvStreams, queueGroups, STREAMS, watchConsumers } from "../../shared/nats/index.js";
import { type ServiceDeps, serviceLifecycle } from "../../shared/process/index.js";
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
  let feed: EventFeed | undefined;
  let worker: DeliveryWorker | undefined;
  let consumers: { stop(): void } | undefined;
  return serviceLifecycle({
    name: SERVICE,
    nc,
    logger,
    queue: queueGroups.webhooks,
    async start(run) {
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
      run.serve("webhookCreate", createWebhook(ctx));
      run.serve("webhookList", listWebhooks(ctx));
      run.serve("webhookDelete", deleteWebhook(ctx));
      run.serve("webhookTest", testWebhook(ctx));
      run.serve("webhookDeliveriesList", listDeliveries(ctx));
      run.serve("webhookDeliveryRetry", retryDelivery(ctx));
      // The backlogs, for /metrics: job revisions not yet turned into deliveries, and deliveries not yet done.
      consumers = watchConsumers(
        nc,
        [
          { stream: kvStreams.name(BUCKETS.jobs), consumer: CONSUMERS.webhookEvents },
          { stream: STREAMS.webhookDeliveries, consumer: CONSUMERS.webhookDeliveries },
        ],
        { intervalMs: config.CJS_JETSTREAM_PROBE_INTERVAL_MS },
      );
    },
    async stop(drain) {
      consumers?.stop();
      await drain();
      await worker?.stop();
      await feed?.stop();
    },
  });
}
