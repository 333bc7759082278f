import {
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream";
import { nanos, type NatsConnection } from "@nats-io/transport-node";
import { AppError } from "../../shared/errors/index.js";
import { BUCKETS, ensureBuckets, ensureStream, JsonBucket, STREAMS, subjects } from "../../shared/nats/index.js";
import type { Clock, Logger } from "../../shared/runtime/index.js";
import type { WebhooksConfig } from "./config.js";
import { DeliveryRecord, WebhookRecord } from "./records.js";
import { serviceKey } from "./secrets.js";

const DAY_MS = 86_400_000;
/** Deliveries due at once, at about 1 KiB each: about a million. */
export const DELIVERIES_MAX_BYTES = 1024 ** 3;

/** What every handler and loop of the webhooks service shares. */
export interface WebhooksContext {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  logger: Logger;
  clock: Clock;
  config: Readonly<WebhooksConfig>;
  webhooks: JsonBucket<typeof WebhookRecord>;
  deliveries: JsonBucket<typeof DeliveryRecord>;
  /** The key webhook secrets are derived from. */
  key: Buffer;
  /** Points the job-event consumer at the businesses that have webhooks now (event-filter.ts); set once the consumer exists. */
  refreshEventFilter: () => Promise<void>;
}

/** `<app>.<business>.<webhook id>`: a webhook's key; another business's webhook is simply absent under the caller's. */
export function webhookKey(appId: string, businessId: string, webhookId: string): string {
  return `${appId}.${businessId}.${webhookId}`;
}

export function deliveryKey(appId: string, businessId: string, webhookId: string, deliveryId: string): string {
  return `${webhookKey(appId, businessId, webhookId)}.${deliveryId}`;
}

/**
 * The buckets (webhooks, their deliveries, the service key; the job records read as
 * events) and the work queue of due deliveries: one message per delivery, de-duplicated
 * by delivery id, removed once acknowledged.
 */
export async function openWebhooksContext(deps: {
  nc: NatsConnection;
  logger: Logger;
  clock: Clock;
  config: Readonly<WebhooksConfig>;
}): Promise<WebhooksContext> {
  const { nc, logger, config } = deps;
  const replicas = config.CJS_NATS_REPLICAS;
  const kv = await ensureBuckets(nc, [BUCKETS.jobs, BUCKETS.webhooks, BUCKETS.webhookDeliveries, BUCKETS.webhookKeys], {
    replicas,
    logger,
  });
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  await ensureStream(
    jsm,
    {
      name: STREAMS.webhookDeliveries,
      subjects: [subjects.webhookDeliveriesAll()],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      num_replicas: replicas,
      // A delivery outlives its retry window by far; then the message has no record to deliver.
      max_age: nanos(8 * DAY_MS),
      // Bounded, and full it refuses a new delivery (its enqueue fails and is retried) rather than drop one due.
      max_bytes: DELIVERIES_MAX_BYTES,
      discard: DiscardPolicy.New,
      duplicate_window: nanos(120_000),
    },
    { logger },
  );
  if (config.CJS_WEBHOOK_SECRET_KEY === undefined) {
    logger.info(
      "CJS_WEBHOOK_SECRET_KEY is not set: webhook secrets are derived from the key kept in the cjs_webhook_keys bucket; set it in production",
    );
  }
  return {
    ...deps,
    js: jetstream(nc),
    jsm,
    webhooks: new JsonBucket(kv[BUCKETS.webhooks], WebhookRecord),
    deliveries: new JsonBucket(kv[BUCKETS.webhookDeliveries], DeliveryRecord),
    key: await serviceKey(config, kv[BUCKETS.webhookKeys], () => deps.clock.now()),
    refreshEventFilter: async () => undefined,
  };
}

/** Every webhook of one business, read from the bucket (the keys of deleted ones are gone: they are erased). */
export async function businessWebhooks(
  ctx: Pick<WebhooksContext, "webhooks">,
  appId: string,
  businessId: string,
): Promise<WebhookRecord[]> {
  const keys = await ctx.webhooks.keys(`${appId}.${businessId}.*`);
  const records = await Promise.all(keys.map((key) => ctx.webhooks.get(key)));
  return records.flatMap((record) => (record ? [record.value] : []));
}

/** The webhook of the caller's business, or 404 (another business's webhook is not found, and stays as it is). */
export async function ownWebhook(
  ctx: Pick<WebhooksContext, "webhooks">,
  caller: { app_id: string; business_id: string },
  webhookId: string,
) {
  const found = await ctx.webhooks.get(webhookKey(caller.app_id, caller.business_id, webhookId));
  if (!found)
    throw new AppError("resource.not_found", `No webhook ${webhookId}.`, { details: { webhook_id: webhookId } });
  return found.value;
}
