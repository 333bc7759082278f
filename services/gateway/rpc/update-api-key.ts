import { RPC_ROUTES } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { isOwnUserKey } from "../identity/api-key-owner.js";
import { apiKeySummary } from "../identity/api-key-summary.js";
import { keySpendThisMonth } from "../identity/api-key-spend.js";

/**
 * `POST /api/compute/api-keys/update`: renames one of the caller's keys or changes its
 * monthly budget (null removes it). Session only, like create: a key must not raise its
 * own budget. Another's key is not found; a revoked key is a conflict.
 */
export function updateApiKey(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.updateApiKey> {
  return async ({ key_id, name, budget_credits_per_month }, { caller, trace, log }) => {
    const stored = await gw.store.apiKeys.mutate(key_id, (key) => {
      if (!isOwnUserKey(key, caller) || key.revoked_at !== null) return undefined;
      return {
        ...key,
        ...(name === undefined ? {} : { name }),
        ...(budget_credits_per_month === undefined ? {} : { budget_credits_per_month }),
      };
    });
    if (!stored || !isOwnUserKey(stored.value, caller))
      throw new AppError("resource.not_found", "No API key with this id belongs to you.");
    if (stored.value.revoked_at !== null) {
      throw new AppError("state.conflict", "This API key is revoked and can no longer be changed.", {
        details: { state: "revoked", key_id },
      });
    }
    gw.authenticator.forgetKey(key_id);
    const spent = await keySpendThisMonth(gw, caller, trace, log);
    return apiKeySummary(stored.value, spent === null ? null : (spent.spent[key_id] ?? 0));
  };
}
