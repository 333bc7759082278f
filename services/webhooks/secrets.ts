import { createHmac, randomBytes } from "node:crypto";
import type { KV } from "@nats-io/kv";
import { z } from "zod";
import { JsonBucket } from "../../shared/nats/index.js";
import { toBase62 } from "../../shared/runtime/index.js";
import type { WebhooksConfig } from "./config.js";

const KEY_RECORD = "current";
const ServiceKeyRecord = z.looseObject({ key: z.string(), created_at: z.string() });

/**
 * The key webhook secrets are derived from: the setting when given, else one generated
 * once and kept in `cjs_webhook_keys` (the first replica's create wins; the others read it),
 * as the gateway keeps its signing keys when none are configured.
 */
export async function serviceKey(
  config: Pick<WebhooksConfig, "CJS_WEBHOOK_SECRET_KEY">,
  keys: KV,
  now: () => number,
): Promise<Buffer> {
  if (config.CJS_WEBHOOK_SECRET_KEY !== undefined) return Buffer.from(config.CJS_WEBHOOK_SECRET_KEY, "utf8");
  const bucket = new JsonBucket(keys, ServiceKeyRecord);
  const stored = await bucket.upsert(
    KEY_RECORD,
    (current) => current ?? { key: randomBytes(32).toString("base64url"), created_at: new Date(now()).toISOString() },
  );
  if (!stored) throw new Error("the webhook service key could not be stored");
  return Buffer.from(stored.value.key, "utf8");
}

/** A fresh salt for a new webhook: with the service key and the webhook id, it gives the secret. */
export function newSecretSalt(): string {
  return randomBytes(16).toString("base64url");
}

/** Bytes per base62 group: 6 bytes (48 bits) are a safe integer, 9 base62 digits wide. */
const GROUP_BYTES = 6;

function base62(bytes: Buffer): string {
  let text = "";
  for (let start = 0; start < bytes.length; start += GROUP_BYTES) {
    const group = bytes.subarray(start, start + GROUP_BYTES);
    text += toBase62(group.readUIntBE(0, group.length), Math.ceil((group.length * 8) / Math.log2(62)));
  }
  return text;
}

/**
 * A webhook's signing secret, derived rather than stored (no secret at rest): `whsec_` and
 * base62(HMAC-SHA256(service key, "<webhook id>.<salt>")). Another service key gives
 * every webhook another secret.
 */
export function webhookSecret(key: Buffer, webhookId: string, salt: string): string {
  return `whsec_${base62(createHmac("sha256", key).update(`${webhookId}.${salt}`).digest())}`;
}

/** The `CJS-Signature` header of a body sent at `timestampSeconds`: `t=<seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`. */
export function signatureHeader(secret: string, timestampSeconds: number, body: string): string {
  const v1 = createHmac("sha256", secret).update(`${timestampSeconds}.${body}`).digest("hex");
  return `t=${timestampSeconds},v1=${v1}`;
}
