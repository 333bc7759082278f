import { DiscardPolicy, jetstreamManager, RetentionPolicy, StorageType } from "@nats-io/jetstream";
import { nanos, type NatsConnection } from "@nats-io/transport-node";
import { STREAMS, subjects } from "./names.js";
import { ensureStream, type TopologyOptions } from "./topology.js";

/** How long the stream drops a second copy of a metering message (same `Nats-Msg-Id`). */
const DUPLICATE_WINDOW_MS = 120_000;
/** About three million charges waiting: far beyond any backlog billing leaves, and a bound on what it may take of the store. */
export const METERING_MAX_BYTES = 1024 ** 3;

/**
 * The metering stream: a work queue of attempt ends that billing charges. The scheduler
 * (which publishes) and billing (which consumes) both provision it, so either may start
 * first. A message is removed once billing acknowledged its charge. Bounded in bytes with
 * `discard: new`: a charge is never dropped to make room; a full stream refuses the
 * publish, and the scheduler's change that needed it fails and is tried again.
 */
export async function ensureMeteringStream(nc: NatsConnection, { replicas, logger }: TopologyOptions): Promise<void> {
  // No account check up front: the stream calls below retry while JetStream does not answer.
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  const stream = {
    name: STREAMS.metering,
    subjects: [subjects.meteringAll()],
    retention: RetentionPolicy.Workqueue,
    max_bytes: METERING_MAX_BYTES,
    discard: DiscardPolicy.New,
    storage: StorageType.File,
    num_replicas: replicas,
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
  };
  await ensureStream(jsm, stream, { logger });
}
