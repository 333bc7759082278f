import { RPC_ROUTES } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { isOwnUserKey } from "../identity/api-key-owner.js";

/**
 * `POST /api/compute/api-keys/revoke`: the caller's own key only (another's is not found).
 * Revoking twice answers the first revocation's time. Every replica evicts the key from
 * its cache when it sees the record change on its KV watch; this one does so at once.
 */
export function revokeApiKey(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.revokeApiKey> {
  return async ({ key_id }, { caller }) => {
    const now = new Date(gw.clock.now()).toISOString();
    const stored = await gw.store.apiKeys.mutate(key_id, (key) =>
      isOwnUserKey(key, caller) && key.revoked_at === null ? { ...key, revoked_at: now } : undefined,
    );
    gw.authenticator.forgetKey(key_id);
    if (!stored || !isOwnUserKey(stored.value, caller) || stored.value.revoked_at === null) {
      throw new AppError("resource.not_found", "No API key with this id belongs to you.");
    }
    return { key_id, revoked_at: stored.value.revoked_at };
  };
}
