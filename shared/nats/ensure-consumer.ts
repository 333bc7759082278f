import type { ConsumerConfig, ConsumerInfo, JetStreamManager } from "@nats-io/jetstream";

/**
 * Creates a durable consumer, or brings an existing one to this configuration (its
 * updatable fields: ack wait, limits, filters), so a replica started with other settings
 * than the one that created it applies its own. Replicas racing to create it: the loser updates.
 */
export async function ensureConsumer(
  jsm: JetStreamManager,
  stream: string,
  config: Partial<ConsumerConfig> & { durable_name: string },
  known?: ConsumerInfo | null,
): Promise<void> {
  const existing =
    known === undefined ? await jsm.consumers.info(stream, config.durable_name).catch(() => null) : known;
  const { durable_name, deliver_policy: _deliverPolicy, ack_policy: _ackPolicy, ...rest } = config;
  // The update merges into the stored config: a single `filter_subject` there would clash with `filter_subjects`.
  const updatable: Partial<ConsumerConfig> =
    rest.filter_subjects === undefined ? rest : { ...rest, filter_subject: undefined };
  if (existing) {
    await jsm.consumers.update(stream, durable_name, updatable);
    return;
  }
  try {
    await jsm.consumers.add(stream, config);
  } catch (error) {
    if (!(await jsm.consumers.info(stream, durable_name).catch(() => null))) throw error;
    await jsm.consumers.update(stream, durable_name, updatable);
  }
}
