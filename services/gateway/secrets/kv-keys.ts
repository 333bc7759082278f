import { generateJwtKey, JWT_ALG, jwtKeyFromJwk, type JwtKey } from "./jwt-keys.js";
import type { KeyRing } from "./key-ring.js";
import type { SigningKeyRecord, UrlSigningKeyRecord } from "./key-records.js";
import { generateUrlKey } from "./url-keys.js";

/** One kind of secret kept in the `cjs_signing_keys` bucket: its record key, and how to make, read and rotate it. */
export interface KvKeyKind<R, K> {
  name: "jwt" | "url";
  /** The record's key in the bucket. */
  key: string;
  fresh(nowMs: number): R;
  ring(record: R): KeyRing<K>;
  /** The record with a fresh signer, the old one retired until `notAfterMs`, and retired keys already past their end dropped. */
  rotate(record: R, nowMs: number, notAfterMs: number): R;
}

const iso = (ms: number) => new Date(ms).toISOString();
const stillAccepted = (nowMs: number) => (retired: { not_after: string }) => Date.parse(retired.not_after) > nowMs;

function freshJwtRecord(nowMs: number): SigningKeyRecord {
  const { kid, privateJwk, publicJwk } = generateJwtKey();
  return { kid, alg: JWT_ALG, private_jwk: privateJwk, public_jwk: publicJwk, created_at: iso(nowMs) };
}

export const KV_JWT_KEYS: KvKeyKind<SigningKeyRecord, JwtKey> = {
  name: "jwt",
  key: "current",
  fresh: freshJwtRecord,
  ring: (record) => ({
    signer: { kid: record.kid, key: jwtKeyFromJwk(record.private_jwk, record.kid), notAfterMs: null },
    retired: (record.retired ?? []).map((old) => ({
      kid: old.kid,
      key: jwtKeyFromJwk(old.public_jwk, old.kid),
      notAfterMs: Date.parse(old.not_after),
    })),
  }),
  rotate: (record, nowMs, notAfterMs) => ({
    ...record,
    ...freshJwtRecord(nowMs),
    retired: [
      { kid: record.kid, public_jwk: record.public_jwk, not_after: iso(notAfterMs) },
      ...(record.retired ?? []).filter(stillAccepted(nowMs)),
    ],
  }),
};

export const KV_URL_KEYS: KvKeyKind<UrlSigningKeyRecord, Buffer> = {
  name: "url",
  key: "url-hmac",
  fresh: (nowMs) => ({ ...generateUrlKey(), created_at: iso(nowMs) }),
  ring: (record) => ({
    signer: { kid: record.kid ?? "", key: Buffer.from(record.secret, "base64url"), notAfterMs: null },
    retired: (record.retired ?? []).map((old) => ({
      kid: old.kid,
      key: Buffer.from(old.secret, "base64url"),
      notAfterMs: Date.parse(old.not_after),
    })),
  }),
  rotate: (record, nowMs, notAfterMs) => ({
    ...record,
    ...generateUrlKey(),
    created_at: iso(nowMs),
    retired: [
      { kid: record.kid ?? "", secret: record.secret, not_after: iso(notAfterMs) },
      ...(record.retired ?? []).filter(stillAccepted(nowMs)),
    ],
  }),
};
