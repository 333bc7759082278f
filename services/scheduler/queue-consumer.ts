import type { ConsumerMessages, JsMsg } from "@nats-io/jetstream";
import { CONSUMERS, decodeJson, STREAMS } from "../../shared/nats/index.js";
import { QueueMessage } from "./job-queue.js";
import type { PendingJobs } from "./pending-jobs.js";
import type { SchedulerContext } from "./scheduler-context.js";

/** A message may arrive before the write it announces (queue first, record second): it is retried this often before being dropped. */
const EARLY_MESSAGE_RETRIES = 5;
const EARLY_MESSAGE_DELAY_MS = 500;

/**
 * Takes queued jobs from the shared durable consumer (work-queue semantics: each message
 * goes to one replica) and holds those that still wait for a node.
 */
export async function consumeQueue(ctx: SchedulerContext, pending: PendingJobs): Promise<ConsumerMessages> {
  const consumer = await ctx.store.js.consumers.get(STREAMS.jobQueue, CONSUMERS.scheduler);
  const messages = await consumer.consume({ max_messages: 256 });
  void (async () => {
    for await (const msg of messages) {
      await take(ctx, pending, msg).catch((error: unknown) => {
        ctx.logger.warn({ err: error }, "could not take a queued job; it will be redelivered");
        msg.nak(1000);
      });
    }
  })();
  return messages;
}

async function take(ctx: SchedulerContext, pending: PendingJobs, msg: JsMsg): Promise<void> {
  const parsed = QueueMessage.safeParse(decodeJson(msg.data));
  if (!parsed.success) {
    ctx.logger.error({ seq: msg.seq }, "dropping a malformed queue message");
    msg.term();
    return;
  }
  const { job_key: jobKey, attempt } = parsed.data;
  const record = (await ctx.store.jobs.get(jobKey))?.value;
  const early = () => (msg.info.deliveryCount < EARLY_MESSAGE_RETRIES ? msg.nak(EARLY_MESSAGE_DELAY_MS) : msg.term());
  if (!record) return early();
  if (record.attempt > attempt || record.state === "succeeded" || record.state === "cancelled") {
    msg.ack();
    return;
  }
  if (record.state !== "queued" || record.attempt !== attempt) {
    // The requeue this message announces has not landed yet (or never will): look again shortly.
    return msg.info.deliveryCount < EARLY_MESSAGE_RETRIES ? msg.nak(EARLY_MESSAGE_DELAY_MS) : msg.ack();
  }
  pending.add({
    msg,
    attempt,
    reason: record.pending_reason,
    job: {
      job_key: jobKey,
      business_id: record.business_id,
      pool_key: record.pool_key,
      type: record.type,
      labels: record.labels,
      resources: record.resources,
      priority: record.priority,
      seq: msg.seq,
    },
  });
  ctx.requestPlacement();
}
