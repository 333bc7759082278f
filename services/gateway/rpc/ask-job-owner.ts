import type { NatsConnection } from "@nats-io/transport-node";
import { foundNoResponder, type InternalCommand, type InternalReply, requestRpc } from "../../../shared/nats/index.js";
import { jobPartition, partitionAddress } from "../../../shared/records/index.js";
import type { RequestTrace } from "../../../shared/tracing/index.js";

/** The node-plane RPCs about one job, each with its twin on the subject of the job's partition. */
const OF_PARTITION = {
  nodeResult: "nodeResultOfPartition",
  nodeDelivered: "nodeDeliveredOfPartition",
} as const;

type JobOwnerRpc = keyof typeof OF_PARTITION;

/**
 * Asks the owner of the job's partition, which holds its record and writes its node's
 * reservations (no read, no race with another replica); while no replica serves the
 * partition's subject (a handover, a replica of an older version), any replica answers.
 */
export async function askJobOwner<N extends JobOwnerRpc>(
  nc: NatsConnection,
  name: N,
  command: InternalCommand<N>,
  trace: RequestTrace | undefined,
): Promise<InternalReply<N>> {
  const address = partitionAddress(jobPartition(command.body.job_id));
  const ask = requestRpc as (
    nc: NatsConnection,
    name: JobOwnerRpc | (typeof OF_PARTITION)[JobOwnerRpc],
    command: InternalCommand<N>,
    options: { address?: string; trace: RequestTrace | undefined },
  ) => Promise<InternalReply<N>>;
  try {
    return await ask(nc, OF_PARTITION[name], command, { address, trace });
  } catch (error) {
    if (!foundNoResponder(error)) throw error;
    return ask(nc, name, command, { trace });
  }
}
