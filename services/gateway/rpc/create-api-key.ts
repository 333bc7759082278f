import { RPC_ROUTES } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { keyExpiry } from "../identity/api-key-expiry.js";
import { mintApiKey } from "../identity/api-key-format.js";
import { apiKeySummary } from "../identity/api-key-summary.js";
import type { ApiKeyRecord } from "../identity/records.js";

/** `POST /api/compute/api-keys/create`: only a signed-in session may mint keys; the secret is returned this once. */
export function createApiKey(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.createApiKey> {
  return async (body, { caller }) => {
    const { name, maxJobsPerHour, maxConcurrentJobs, allowedJobTypes, scopes, budget_credits_per_month } = body;
    const now = gw.clock.now();
    const expiresAt = keyExpiry(body.expires_at, now, gw.config.CJS_API_KEY_MAX_TTL_DAYS);
    const minted = mintApiKey();
    const record: ApiKeyRecord = {
      kind: "user",
      role: caller.role,
      node_id: null,
      expires_at: expiresAt,
      key_id: minted.keyId,
      name,
      hint: minted.hint,
      maxJobsPerHour: maxJobsPerHour ?? null,
      maxConcurrentJobs: maxConcurrentJobs ?? null,
      allowedJobTypes: allowedJobTypes ?? null,
      scopes: scopes ?? null,
      budget_credits_per_month: budget_credits_per_month ?? null,
      created_at: new Date(now).toISOString(),
      last_used_at: null,
      last_used_ip: null,
      revoked_at: null,
      app_id: caller.app_id,
      business_id: caller.business_id,
      user_id: caller.user_id,
      key_hash: minted.hash,
    };
    // The owner index first: a crash in between leaves an index entry without a key, which list skips.
    await gw.store.apiKeyOwners.put(`${caller.user_id}.${minted.keyId}`, {});
    await gw.store.apiKeys.create(minted.keyId, record);
    // A new key has been charged nothing.
    return { ...apiKeySummary(record, 0), key: minted.key };
  };
}
