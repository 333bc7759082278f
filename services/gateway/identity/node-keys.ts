import type { GatewayContext } from "../gateway-context.js";
import { mintApiKey } from "./api-key-format.js";
import type { ApiKeyRecord } from "./records.js";

export interface NodeKeyOwner {
  app_id: string;
  business_id: string;
  user_id: string;
  node_id: string;
  name: string;
}

/**
 * Mints a node's own key. With `retireOthersAt`, every earlier key of the node expires
 * then (a rotation); the owner index lists a node's keys the way it lists a user's.
 */
export async function mintNodeKey(
  gw: GatewayContext,
  owner: NodeKeyOwner,
  retireOthersAt?: string,
): Promise<{ keyId: string; key: string }> {
  const minted = mintApiKey();
  const record: ApiKeyRecord = {
    kind: "node",
    role: "member",
    node_id: owner.node_id,
    expires_at: null,
    key_id: minted.keyId,
    name: `node ${owner.name}`,
    hint: minted.hint,
    maxJobsPerHour: null,
    maxConcurrentJobs: null,
    allowedJobTypes: null,
    // A node key reaches only the node plane, where no scope applies.
    scopes: null,
    budget_credits_per_month: null,
    created_at: new Date(gw.clock.now()).toISOString(),
    last_used_at: null,
    last_used_ip: null,
    revoked_at: null,
    app_id: owner.app_id,
    business_id: owner.business_id,
    user_id: owner.user_id,
    key_hash: minted.hash,
  };
  const ownerKey = (keyId: string) => `${owner.node_id}.${keyId}`;
  const earlier: string[] = [];
  if (retireOthersAt)
    for (const key of await gw.store.apiKeyOwners.keys(`${owner.node_id}.*`))
      earlier.push(key.slice(owner.node_id.length + 1));
  await gw.store.apiKeyOwners.put(ownerKey(minted.keyId), {});
  await gw.store.apiKeys.create(minted.keyId, record);
  if (retireOthersAt) {
    const retireAt = retireOthersAt;
    for (const keyId of earlier) {
      await gw.store.apiKeys.mutate(keyId, (key) =>
        key.expires_at === null || key.expires_at > retireAt ? { ...key, expires_at: retireAt } : undefined,
      );
      gw.authenticator.forgetKey(keyId);
    }
  }
  return { keyId: minted.keyId, key: minted.key };
}

/**
 * Revokes every key of a deleted node that belongs to the tenant, drops them from the owner
 * index and from this replica's cache (the others evict on their watch). Idempotent: keys
 * revoked before are not counted again. Answers how many keys this call revoked.
 */
export async function retireNodeKeys(
  gw: GatewayContext,
  tenant: { app_id: string; business_id: string },
  nodeId: string,
): Promise<number> {
  const revokedAt = new Date(gw.clock.now()).toISOString();
  const owned = (key: ApiKeyRecord) =>
    key.kind === "node" &&
    key.node_id === nodeId &&
    key.app_id === tenant.app_id &&
    key.business_id === tenant.business_id;
  let retired = 0;
  for (const ownerKey of await gw.store.apiKeyOwners.keys(`${nodeId}.*`)) {
    const keyId = ownerKey.slice(nodeId.length + 1);
    const stored = await gw.store.apiKeys.mutate(keyId, (key) =>
      owned(key) && key.revoked_at === null ? { ...key, revoked_at: revokedAt } : undefined,
    );
    gw.authenticator.forgetKey(keyId);
    if (!stored || !owned(stored.value)) continue;
    if (stored.value.revoked_at === revokedAt) retired += 1;
    // Only after the revocation: a crash in between leaves the index entry for the next call to find.
    await gw.store.apiKeyOwners.delete(ownerKey);
  }
  return retired;
}
