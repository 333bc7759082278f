import { RPC_ROUTES } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { apiKeySummary } from "../identity/api-key-summary.js";

/** `POST /api/compute/api-keys/list`: the caller's own keys, newest first, never a secret. */
export function listApiKeys(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.listApiKeys> {
  return async (_body, { caller }) => {
    const keyIds: string[] = [];
    for (const key of await gw.store.apiKeyOwners.keys(`${caller.user_id}.*`)) keyIds.push(key.slice(caller.user_id.length + 1));
    const records = await Promise.all(keyIds.map((keyId) => gw.store.apiKeys.get(keyId)));
    const items = records
      .flatMap((entry) => (entry && entry.value.user_id === caller.user_id && entry.value.app_id === caller.app_id ? [entry.value] : []))
      .sort((left, right) => right.created_at.localeCompare(left.created_at))
      .map(apiKeySummary);
    return { items };
  };
}
