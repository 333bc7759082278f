import type { RPC_ROUTES } from "../../../shared/contract/index.js";
import type { NatsConnection } from "@nats-io/transport-node";
import { foundNoResponder, type InternalCommand, type InternalReply, requestRpc } from "../../../shared/nats/index.js";
import type { RequestTrace } from "../../../shared/tracing/index.js";
import { jobPartition, partitionAddress } from "../../../shared/records/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { nodeContext } from "./forward.js";
import { withUploadUrl } from "./poll.js";

/**
 * Asks the owner of the job's partition, which holds its record and writes its node's
 * reservations (no read, no race with another replica); while no replica serves the
 * partition's subject (a handover, a replica of an older version), any replica answers.
 */
export async function askNodeResult(
  nc: NatsConnection,
  command: InternalCommand<"nodeResult">,
  trace: RequestTrace | undefined,
): Promise<InternalReply<"nodeResult">> {
  try {
    return await requestRpc(nc, "nodeResultOfPartition", command, {
      address: partitionAddress(jobPartition(command.body.job_id)),
      trace,
    });
  } catch (error) {
    if (!foundNoResponder(error)) throw error;
    return requestRpc(nc, "nodeResult", command, { trace });
  }
}

/**
 * `POST /api/compute/nodes/result`: the scheduler records the result; with `take_next`, its
 * answer may carry the next attempt for the slot it freed, which goes to the node with its
 * upload URL signed, as a poll would give it.
 */
export function reportResult(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.result> {
  return async (body, { caller, origin, trace }) => {
    const { next, ...recorded } = await askNodeResult(gw.nc, { caller: nodeContext(caller), body }, trace);
    return next ? { ...recorded, next: withUploadUrl(gw, origin, next) } : recorded;
  };
}
