import { AckPolicy, type ConsumerConfig, DeliverPolicy, type JsMsg } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import { webhookWants } from "../../shared/contract/index.js";
import { ensureConsumer, BUCKETS, CONSUMERS, decodeJson, kvStreams } from "../../shared/nats/index.js";
import { JobRecord } from "../../shared/records/index.js";
import { enqueueDelivery } from "./enqueue-delivery.js";
import { eventFilterSubjects, sameSubjects } from "./event-filter.js";
import { eventsOfRecord } from "./job-event.js";
import { businessWebhooks, type WebhooksContext } from "./webhooks-context.js";

const JOBS_STREAM = kvStreams.name(BUCKETS.jobs);
/** Queuing a revision's deliveries takes a few KV calls; one a dead replica held comes back after this. */
const ACK_WAIT_MS = 15_000;
const RETRY_AFTER_ERROR_MS = 5_000;
/** How often each replica sets the filter from the bucket anyway: heals a change another replica applied from an older listing. */
const FILTER_REFRESH_MS = 30_000;

export interface EventFeed {
  /** Points the consumer at the businesses that have webhooks now. */
  refresh(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Turns job record revisions into deliveries. A durable consumer on the job bucket's
 * stream, shared by every replica and filtered to the businesses with webhooks, reads
 * each revision; the event it stands for (job-event.ts) is queued for every webhook of the
 * business that wants it and existed when it happened. A revision is acknowledged only
 * once its deliveries are queued, so one a replica dies with is read again (at least
 * once; the deliveries' ids make the second reading change nothing). Only the last
 * revision of a job is kept in the stream, so a job that starts and ends while every
 * replica is down makes its final event only.
 */
export async function startEventFeed(ctx: WebhooksContext): Promise<EventFeed> {
  const base: Partial<ConsumerConfig> & { durable_name: string } = {
    durable_name: CONSUMERS.webhookEvents,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.New,
    ack_wait: nanos(ACK_WAIT_MS),
    max_ack_pending: 1_000,
    max_deliver: -1,
  };
  let applying = Promise.resolve();
  const apply = async (): Promise<void> => {
    const filters = await eventFilterSubjects(ctx);
    const existing = await ctx.jsm.consumers.info(JOBS_STREAM, CONSUMERS.webhookEvents).catch(() => null);
    if (
      existing &&
      sameSubjects(
        existing.config.filter_subjects ?? (existing.config.filter_subject ? [existing.config.filter_subject] : []),
        filters,
      )
    )
      return;
    await ensureConsumer(ctx.jsm, JOBS_STREAM, { ...base, filter_subjects: filters }, existing);
  };
  // One change at a time in a replica, each from a fresh listing.
  const refresh = () => {
    const next = applying.then(apply, apply);
    applying = next.catch(() => undefined);
    return next;
  };
  await refresh();

  const consumer = await ctx.js.consumers.get(JOBS_STREAM, CONSUMERS.webhookEvents);
  const messages = await consumer.consume({ max_messages: 64 });
  const loop = (async () => {
    for await (const msg of messages) {
      await handleRevision(ctx, msg).catch((error: unknown) => {
        ctx.logger.warn(
          { err: error, seq: msg.seq },
          "could not queue the webhook deliveries of a job record revision; it will be read again",
        );
        msg.nak(RETRY_AFTER_ERROR_MS);
      });
    }
  })();
  const timer = setInterval(() => {
    refresh().catch((error: unknown) => ctx.logger.warn({ err: error }, "could not refresh the webhook event filter"));
  }, FILTER_REFRESH_MS).unref();

  return {
    refresh,
    async stop() {
      clearInterval(timer);
      await messages.close();
      await loop.catch(() => undefined);
    },
  };
}

async function handleRevision(ctx: WebhooksContext, msg: JsMsg): Promise<void> {
  // A delete or purge marker: no record.
  if (msg.headers?.has("KV-Operation")) {
    msg.ack();
    return;
  }
  const parsed = JobRecord.safeParse(decodeJson(msg.data));
  if (!parsed.success) {
    ctx.logger.error({ seq: msg.seq, subject: msg.subject }, "skipping a job record the webhooks service cannot read");
    msg.term();
    return;
  }
  let events: ReturnType<typeof eventsOfRecord>;
  try {
    events = eventsOfRecord(parsed.data);
  } catch (error) {
    // A record the public job schema refuses would fail the same way on every redelivery.
    ctx.logger.error(
      { err: error, seq: msg.seq, subject: msg.subject },
      "skipping a job record that cannot be shown in a webhook event",
    );
    msg.term();
    return;
  }
  if (events.length > 0) {
    const webhooks = await businessWebhooks(ctx, parsed.data.app_id, parsed.data.business_id);
    for (const event of events)
      for (const webhook of webhooks) {
        if (webhookWants(webhook.events, event.type) && webhook.created_at <= event.created_at)
          await enqueueDelivery(ctx, webhook, event);
      }
  }
  msg.ack();
}
