import { createHash, timingSafeEqual } from "node:crypto";
import { crc32 } from "node:zlib";
import { randomBase62, toBase62 } from "../../../shared/runtime/index.js";

/** The fixed prefix of every key: lets secret scanners and people recognise one. */
export const API_KEY_PREFIX = "cjs";

const ID_LENGTH = 20;
/** 32 base62 characters: 190 bits of randomness. */
const SECRET_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const BODY = new RegExp(
  `^${API_KEY_PREFIX}_([0-9A-Za-z]{${ID_LENGTH}})([0-9A-Za-z]{${SECRET_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`,
);

function checksum(text: string): string {
  return toBase62(crc32(text), CHECKSUM_LENGTH);
}

export interface MintedApiKey {
  /** The public id (`key_…`), used to list and revoke the key. */
  keyId: string;
  /** `cjs_<id><secret><checksum>`: given to the caller once. */
  key: string;
  /** The last four characters, shown in lists. */
  hint: string;
  /** What is stored: never the key itself. */
  hash: string;
}

/** SHA-256 is enough for a key with 190 random bits: no dictionary can reach it, so no slow hash is needed. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export function mintApiKey(): MintedApiKey {
  const id = randomBase62(ID_LENGTH);
  const withoutChecksum = `${API_KEY_PREFIX}_${id}${randomBase62(SECRET_LENGTH)}`;
  const key = `${withoutChecksum}${checksum(withoutChecksum)}`;
  return { keyId: `key_${id}`, key, hint: key.slice(-4), hash: hashApiKey(key) };
}

/**
 * Reads the key id out of a presented key, or null when the text is not a well-formed
 * key (wrong prefix, length or checksum): such a key is refused without a lookup.
 */
export function parseApiKey(key: string): { keyId: string } | null {
  const match = BODY.exec(key);
  if (!match) return null;
  const [, id, secret, sum] = match;
  if (checksum(`${API_KEY_PREFIX}_${id}${secret}`) !== sum) return null;
  return { keyId: `key_${id}` };
}

/** Constant-time comparison of a presented key with the stored hash. */
export function apiKeyMatches(key: string, storedHash: string): boolean {
  const actual = Buffer.from(hashApiKey(key), "hex");
  const expected = Buffer.from(storedHash, "hex");
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
