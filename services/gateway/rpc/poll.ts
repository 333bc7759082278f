import type { PollResponse } from "../../../shared/contract/index.js";
import { RPC_ROUTES } from "../../../shared/contract/index.js";
import { requestRpc, subjects } from "../../../shared/nats/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { nodeContext } from "./forward.js";

/**
 * `POST /api/compute/nodes/poll`: asks the scheduler; with nothing assigned and a
 * `wait_seconds`, waits for the node's assignment event and asks again, so a new job
 * reaches an idle node at once without the node polling in a loop.
 */
export function pollNode(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.poll> {
  return async (body, { caller }) => {
    const node = nodeContext(caller);
    const ask = (): Promise<PollResponse> => requestRpc(gw.nc, subjects.nodePoll(), { caller: node, body }, RPC_ROUTES.poll.response);
    if (body.wait_seconds === 0) return ask();
    // Subscribe before the first ask: an assignment between the two is not missed.
    const assigned = gw.nc.subscribe(subjects.nodeAssigned(node.node_id), { max: 1 });
    try {
      const first = await ask();
      if (first.jobs.length > 0) return first;
      const woken = (async () => {
        for await (const _event of assigned) return true;
        return false;
      })();
      const timer = setTimeout(() => assigned.unsubscribe(), body.wait_seconds * 1000);
      try {
        if (!(await woken)) return first;
      } finally {
        clearTimeout(timer);
      }
      return await ask();
    } finally {
      assigned.unsubscribe();
    }
  };
}
