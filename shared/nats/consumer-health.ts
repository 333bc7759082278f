import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { consumerAckPending, consumerPending, consumerRedelivered, jetStreamApiErrors } from "./nats-metrics.js";

/** A durable consumer, by its stream and name. */
export interface DurableConsumer {
  stream: string;
  consumer: string;
}

/**
 * Reads the info of each durable consumer every `intervalMs` after the previous read and
 * exports its backlog: messages not yet delivered, delivered and unacknowledged, and
 * redelivered. One small API call per consumer per interval; a read that fails keeps the
 * last values and counts a JetStream API error.
 */
export function watchConsumers(
  nc: NatsConnection,
  consumers: readonly DurableConsumer[],
  { intervalMs }: { intervalMs: number },
): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const readOnce = async (): Promise<void> => {
    const jsm = await jetstreamManager(nc, { checkAPI: false });
    for (const labels of consumers) {
      try {
        const info = await jsm.consumers.info(labels.stream, labels.consumer);
        consumerPending.set(labels, info.num_pending);
        consumerAckPending.set(labels, info.num_ack_pending);
        consumerRedelivered.set(labels, info.num_redelivered);
      } catch {
        jetStreamApiErrors.inc({ operation: "consumer_info" });
      }
    }
  };
  const run = async (): Promise<void> => {
    await readOnce().catch(() => jetStreamApiErrors.inc({ operation: "consumer_info" }));
    if (!stopped) timer = setTimeout(() => void run(), intervalMs).unref();
  };
  void run();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
