import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { z } from "zod";
import { BUCKETS, JsonBucket, type BucketName } from "../../shared/nats/index.js";

const AnyRecord = z.record(z.string(), z.unknown());

/**
 * What a request may change, per bucket: the fields of each record that only requests
 * change. Counters that every request touches (rate limits, login guards, one-time codes)
 * and what moves on its own (heartbeats, `last_used_at`, pending reasons) are left out.
 */
const WATCHED: Partial<Record<BucketName, readonly string[]>> = {
  [BUCKETS.apps]: [],
  [BUCKETS.businesses]: [],
  [BUCKETS.users]: [],
  [BUCKETS.apiKeys]: ["revoked_at", "expires_at"],
  [BUCKETS.apiKeyOwners]: [],
  [BUCKETS.sessions]: ["ended_at", "token_hash"],
  [BUCKETS.jobs]: ["state", "attempt"],
  [BUCKETS.nodes]: ["draining"],
  [BUCKETS.artifactIndex]: ["object_revision"],
  [BUCKETS.webhooks]: ["url", "events"],
};

/** Every watched record as a line `<bucket> <key> <fields>`, sorted: equal snapshots mean no request changed anything. */
export async function storeSnapshot(nc: NatsConnection): Promise<string[]> {
  const kvm = new Kvm(nc);
  const lines = await Promise.all(
    Object.entries(WATCHED).map(async ([bucket, fields]) => {
      const records = new JsonBucket(await kvm.open(bucket), AnyRecord);
      const keys = await records.keys();
      return Promise.all(
        keys.map(async (key) => {
          const stored = await records.get(key);
          const shown = stored ? JSON.stringify(fields.map((field) => stored.value[field] ?? null)) : "deleted";
          return `${bucket} ${key} ${shown}`;
        }),
      );
    }),
  );
  return lines.flat().sort();
}
