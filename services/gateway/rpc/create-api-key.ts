import { RPC_ROUTES } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { mintApiKey } from "../identity/api-key-format.js";
import { apiKeySummary } from "../identity/api-key-summary.js";
import type { ApiKeyRecord } from "../identity/records.js";

/** `POST /api/compute/api-keys/create`: only a signed-in session may mint keys; the secret is returned this once. */
export function createApiKey(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.createApiKey> {
  return async ({ name, maxJobsPerHour, maxConcurrentJobs, allowedJobTypes }, { caller }) => {
    const minted = mintApiKey();
    const record: ApiKeyRecord = {
      kind: "user",
      role: caller.role,
      node_id: null,
      expires_at: null,
      key_id: minted.keyId,
      name,
      hint: minted.hint,
      maxJobsPerHour: maxJobsPerHour ?? null,
      maxConcurrentJobs: maxConcurrentJobs ?? null,
      allowedJobTypes: allowedJobTypes ?? null,
      created_at: new Date(gw.clock.now()).toISOString(),
      last_used_at: null,
      revoked_at: null,
      app_id: caller.app_id,
      business_id: caller.business_id,
      user_id: caller.user_id,
      key_hash: minted.hash,
    };
    // The owner index first: a crash in between leaves an index entry without a key, which list skips.
    await gw.store.apiKeyOwners.put(`${caller.user_id}.${minted.keyId}`, {});
    await gw.store.apiKeys.create(minted.keyId, record);
    return { ...apiKeySummary(record), key: minted.key };
  };
}
