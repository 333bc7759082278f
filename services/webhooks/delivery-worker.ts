import { AckPolicy, DeliverPolicy, type JsMsg } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import { ensureConsumer, CONSUMERS, decodeJson, STREAMS } from "../../shared/nats/index.js";
import { attemptDelivery } from "./attempt-delivery.js";
import { DeliveryDue } from "./records.js";
import { deliveriesInFlight } from "./webhook-metrics.js";
import type { WebhooksContext } from "./webhooks-context.js";

/** POSTs under way at once in one replica, over every webhook. */
const MAX_IN_FLIGHT = 32;
/** POSTs under way at once to one webhook in one replica: a receiver that hangs holds at most these. */
const MAX_IN_FLIGHT_PER_WEBHOOK = 4;
const RETRY_AFTER_ERROR_MS = 5_000;

export interface DeliveryWorker {
  stop(): Promise<void>;
}

/**
 * Takes due deliveries from the work queue (a durable consumer every replica shares) and
 * tries each. A message is acknowledged only once its try is recorded, so one a replica
 * dies with is tried again (at least once). A delivery to go again later is NAKed with its
 * pause. Tries run side by side, bounded overall and per webhook: a webhook at its bound
 * has its further deliveries put back for a while, so a hanging receiver never holds the
 * slots the others need.
 */
export async function startDeliveryWorker(ctx: WebhooksContext): Promise<DeliveryWorker> {
  // Room for the POST and the write of its try; a delivery a dead replica held comes back after this.
  const ackWaitMs = 2 * ctx.config.CJS_WEBHOOK_TIMEOUT_MS + 5_000;
  await ensureConsumer(ctx.jsm, STREAMS.webhookDeliveries, {
    durable_name: CONSUMERS.webhookDeliveries,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(ackWaitMs),
    // Deliveries waiting out their backoff count here; the bound on POSTs is MAX_IN_FLIGHT.
    max_ack_pending: 100_000,
    max_deliver: -1,
  });
  const consumer = await ctx.js.consumers.get(STREAMS.webhookDeliveries, CONSUMERS.webhookDeliveries);
  const messages = await consumer.consume({ max_messages: MAX_IN_FLIGHT });
  const perWebhook = new Map<string, number>();
  let inFlight = 0;
  let freed: (() => void) | undefined;
  let stopping = false;
  // An ack after the connection closed (a stop during a slow POST) fails; the message simply comes back.
  const settle = (act: () => void) => {
    try {
      act();
    } catch {
      // Redelivered after ack_wait.
    }
  };

  const run = async (msg: JsMsg, due: DeliveryDue): Promise<void> => {
    try {
      const outcome = await attemptDelivery(ctx, due);
      settle(() => (outcome.done ? msg.ack() : msg.nak(outcome.retryInMs)));
    } catch (error) {
      ctx.logger.warn(
        { err: error, webhook_id: due.webhook_id, delivery_id: due.delivery_id },
        "could not try a webhook delivery; it will be tried again",
      );
      settle(() => msg.nak(RETRY_AFTER_ERROR_MS));
    } finally {
      inFlight -= 1;
      deliveriesInFlight.dec();
      perWebhook.set(due.webhook_id, (perWebhook.get(due.webhook_id) ?? 1) - 1);
      if ((perWebhook.get(due.webhook_id) ?? 0) <= 0) perWebhook.delete(due.webhook_id);
      freed?.();
    }
  };

  const loop = (async () => {
    for await (const msg of messages) {
      const parsed = DeliveryDue.safeParse(decodeJson(msg.data));
      if (!parsed.success) {
        ctx.logger.error({ seq: msg.seq }, "dropping a delivery message that cannot be read");
        msg.term();
        continue;
      }
      const due = parsed.data;
      if ((perWebhook.get(due.webhook_id) ?? 0) >= MAX_IN_FLIGHT_PER_WEBHOOK) {
        msg.nak(ctx.config.CJS_WEBHOOK_TIMEOUT_MS);
        continue;
      }
      while (inFlight >= MAX_IN_FLIGHT && !stopping) await new Promise<void>((resolve) => (freed = resolve));
      inFlight += 1;
      deliveriesInFlight.inc();
      perWebhook.set(due.webhook_id, (perWebhook.get(due.webhook_id) ?? 0) + 1);
      void run(msg, due);
    }
  })();

  return {
    // POSTs under way are not waited for: their messages come back to another replica (at least once).
    async stop() {
      stopping = true;
      freed?.();
      await messages.close();
      await loop.catch(() => undefined);
    },
  };
}
