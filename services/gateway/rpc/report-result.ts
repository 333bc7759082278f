import type { RPC_ROUTES } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { askJobOwner } from "./ask-job-owner.js";
import { nodeContext } from "./forward.js";
import { withUploadUrl } from "./poll.js";

/**
 * `POST /api/compute/nodes/result`: the scheduler records the result; with `take_next`, its
 * answer may carry the next attempt for the slot it freed, which goes to the node with its
 * upload URL signed, as a poll would give it.
 */
export function reportResult(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.result> {
  return async (body, { caller, origin, trace }) => {
    const { next, ...recorded } = await askJobOwner(gw.nc, "nodeResult", { caller: nodeContext(caller), body }, trace);
    return next ? { ...recorded, next: withUploadUrl(gw, origin, next) } : recorded;
  };
}
