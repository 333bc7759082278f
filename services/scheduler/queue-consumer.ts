import type { JsMsg } from "@nats-io/jetstream";
import { BUCKETS, CONSUMERS, decodeJson, kvStreams, PRIORITY_GROUPS } from "../../shared/nats/index.js";
import { JobRecord, mayBeQueued } from "../../shared/records/index.js";
import type { PendingJobs } from "./pending-jobs.js";
import type { SchedulerContext } from "./scheduler-context.js";

/**
 * Takes job records from the consumer every replica shares over the job records' stream
 * (each revision goes to one replica) and holds the queued ones until they are placed.
 * The message is the record itself, so holding a job costs no read; any other revision is
 * acknowledged at once. A later revision of a record deletes the earlier message (the
 * bucket keeps one revision), so what arrives is never older than the last queued state.
 */
export async function consumeQueue(ctx: SchedulerContext, pending: PendingJobs): Promise<QueueConsumer> {
  const stream = kvStreams.name(BUCKETS.jobs);
  const consumer = await ctx.store.js.consumers.get(stream, CONSUMERS.scheduler);
  // A small client buffer: messages waiting in it are not kept alive, so a long wait there would let them expire and go to another replica too.
  const messages = await consumer.consume({ max_messages: 256, group: PRIORITY_GROUPS.schedulers });
  let pinned = false;
  void (async () => {
    for await (const status of messages.status()) {
      if (status.type === "consumer_pinned") pinned = true;
      if (status.type === "consumer_unpinned") pinned = false;
    }
  })();
  void (async () => {
    for await (const msg of messages) {
      try {
        take(ctx, pending, msg);
      } catch (error) {
        ctx.logger.warn({ err: error }, "could not take a job record; it will be redelivered");
        msg.nak(1000);
      }
    }
  })();
  return {
    async close() {
      await messages.close();
      // Hand the pin over at once rather than after the priority timeout; never unpin another replica.
      if (pinned) await ctx.store.jsm.consumers.unpin(stream, CONSUMERS.scheduler, PRIORITY_GROUPS.schedulers).catch(() => undefined);
    },
  };
}

export interface QueueConsumer {
  /** Stops taking job records, and lets another replica be pinned at once when this one was. */
  close(): Promise<void>;
}

function take(ctx: SchedulerContext, pending: PendingJobs, msg: JsMsg): void {
  // A delete or purge marker carries no record.
  if (msg.headers?.get("KV-Operation")) {
    msg.ack();
    return;
  }
  const jobKey = kvStreams.keyOf(BUCKETS.jobs, msg.subject);
  if (!mayBeQueued(msg.data)) {
    msg.ack();
    // Revisions arrive in order, so this one is newer than any queued revision held: the job left the queue.
    pending.drop(jobKey, Number.POSITIVE_INFINITY);
    return;
  }
  const parsed = JobRecord.safeParse(decodeJson(msg.data));
  if (!parsed.success) {
    ctx.logger.error({ seq: msg.seq, subject: msg.subject }, "skipping a job record that does not parse");
    msg.term();
    return;
  }
  const record = parsed.data;
  if (record.state !== "queued") {
    msg.ack();
    pending.drop(jobKey, record.attempt);
    return;
  }
  pending.add({
    msg,
    attempt: record.attempt,
    reason: record.pending_reason,
    job: {
      job_key: jobKey,
      business_id: record.business_id,
      pool_key: record.pool_key,
      type: record.type,
      labels: record.labels,
      resources: record.resources,
      priority: record.priority,
      queued_at_ms: Date.parse(record.queued_at),
    },
  });
  ctx.requestPlacement();
}
