import type { Logger } from "pino";
import type { JsonBucket } from "../../../shared/nats/index.js";
import type { Clock } from "../../../shared/runtime/index.js";
import type { JwtKey } from "./jwt-keys.js";
import { configuredKindKeys, kvKindKeys, type KindKeys } from "./kind-keys.js";
import type { SigningKeyRecord, UrlSigningKeyRecord } from "./key-records.js";
import { JWT_KEYS, URL_KEYS, type ConfiguredKeySets } from "./key-sources.js";
import { KV_JWT_KEYS, KV_URL_KEYS } from "./kv-keys.js";

/** The gateway's two secrets: the access-token key pair and the URL-signing secret. */
export interface SigningKeys {
  jwt: KindKeys<JwtKey>;
  url: KindKeys<Buffer>;
  stop(): void;
}

export interface SigningKeysOptions {
  clock: Clock;
  logger: Logger;
  /** Pause between re-reads of a key file. */
  reloadIntervalMs: number;
}

/** Each secret from its setting when one is given (see `configuredKeySets`), else from NATS KV. */
export async function openSigningKeys(
  buckets: { signingKeys: JsonBucket<typeof SigningKeyRecord>; urlSigningKeys: JsonBucket<typeof UrlSigningKeyRecord> },
  configured: ConfiguredKeySets,
  options: SigningKeysOptions,
): Promise<SigningKeys> {
  const jwt = configured.jwt
    ? configuredKindKeys(configured.jwt, JWT_KEYS, options)
    : await kvKindKeys(buckets.signingKeys, KV_JWT_KEYS, options);
  let url: KindKeys<Buffer>;
  try {
    url = configured.url
      ? configuredKindKeys(configured.url, URL_KEYS, options)
      : await kvKindKeys(buckets.urlSigningKeys, KV_URL_KEYS, options);
  } catch (error) {
    jwt.stop();
    throw error;
  }
  return {
    jwt,
    url,
    stop() {
      jwt.stop();
      url.stop();
    },
  };
}
