import type { ConsumerMessages, JsMsg } from "@nats-io/jetstream";
import { CONSUMERS, decodeJson, STREAMS } from "../../shared/nats/index.js";
import { QueueMessage } from "./job-queue.js";
import type { PendingJobs } from "./pending-jobs.js";
import type { SchedulerContext } from "./scheduler-context.js";

/**
 * A message may arrive before the write it announces (queue first, record second): it is
 * looked at again after these delays, then dropped. The first wait is short because the
 * record is usually a millisecond behind.
 */
const EARLY_MESSAGE_DELAYS_MS = [10, 50, 250, 1000, 2000, 5000, 10_000, 30_000];

function lookAgainLater(msg: JsMsg, otherwise: () => void): void {
  const delay = EARLY_MESSAGE_DELAYS_MS[msg.info.deliveryCount - 1];
  if (delay === undefined) otherwise();
  else msg.nak(delay);
}

/**
 * Takes queued jobs from the shared durable consumer (work-queue semantics: each message
 * goes to one replica) and holds those that still wait for a node.
 */
export async function consumeQueue(ctx: SchedulerContext, pending: PendingJobs): Promise<ConsumerMessages> {
  const consumer = await ctx.store.js.consumers.get(STREAMS.jobQueue, CONSUMERS.scheduler);
  // A small client buffer: messages waiting in it are not kept alive, so a long wait there would let them expire and go to another replica too.
  const messages = await consumer.consume({ max_messages: 64 });
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
  if (!record) return lookAgainLater(msg, () => msg.term());
  if (record.attempt > attempt || record.state === "succeeded" || record.state === "cancelled") {
    msg.ack();
    return;
  }
  if (record.state !== "queued" || record.attempt !== attempt) {
    // The requeue this message announces has not landed yet (or never will): look again shortly.
    return lookAgainLater(msg, () => msg.ack());
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
