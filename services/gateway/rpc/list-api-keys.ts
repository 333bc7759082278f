import { RPC_ROUTES } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { isOwnUserKey } from "../identity/api-key-owner.js";
import { keySpendThisMonth } from "../identity/api-key-spend.js";
import { apiKeySummary } from "../identity/api-key-summary.js";

/** `POST /api/compute/api-keys/list`: the caller's own keys, newest first, never a secret, each with what it was charged this month. */
export function listApiKeys(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.listApiKeys> {
  return async (_body, { caller, trace, log }) => {
    const keyIds: string[] = [];
    for (const key of await gw.store.apiKeyOwners.keys(`${caller.user_id}.*`))
      keyIds.push(key.slice(caller.user_id.length + 1));
    const [records, spend] = await Promise.all([
      Promise.all(keyIds.map((keyId) => gw.store.apiKeys.get(keyId))),
      keySpendThisMonth(gw, caller, trace, log),
    ]);
    const items = records
      .flatMap((entry) => (entry && isOwnUserKey(entry.value, caller) ? [entry.value] : []))
      .sort((left, right) => right.created_at.localeCompare(left.created_at))
      .map((record) => apiKeySummary(record, spend === null ? null : (spend.spent[record.key_id] ?? 0)));
    return { items };
  };
}
