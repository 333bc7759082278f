import { type RPC_ROUTES } from "../../../shared/contract/index.js";
import { requestRpc } from "../../../shared/nats/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { userContext } from "../rpc/forward.js";

/** Forwards a checkout to billing with the origin the client addressed: the sandbox's page lives there. */
export function createCheckout(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.createCheckout> {
  return async (body, { caller, origin, trace }) =>
    requestRpc(
      gw.nc,
      "billingCheckoutCreate",
      { caller: userContext(caller), body, origin },
      { timeoutMs: 30_000, trace },
    );
}
