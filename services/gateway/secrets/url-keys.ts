import { randomBytes } from "node:crypto";
import { z } from "zod";
import { randomBase62 } from "../../../shared/runtime/index.js";
import { KeyMarks, keySetSchema, ringOf } from "./key-set-format.js";
import type { KeyRing } from "./key-ring.js";

/** The fewest bytes a URL-signing secret may have: as many as the HMAC-SHA256 output. */
const MIN_SECRET_BYTES = 32;

/** Canonical base64url text (as the signatures are) of at least MIN_SECRET_BYTES bytes. */
export const UrlSecret = z.string().refine((text) => {
  const bytes = Buffer.from(text, "base64url");
  return bytes.toString("base64url") === text && bytes.length >= MIN_SECRET_BYTES;
}, `a secret is base64url text of at least ${MIN_SECRET_BYTES} random bytes`);

/** `CJS_URL_SIGNING_KEYS(_FILE)`: `{ "keys": [{ "kid", "secret", "current"?, "not_after"? }] }`. */
export const UrlKeySet = keySetSchema(z.strictObject({ ...KeyMarks, secret: UrlSecret }));
export type UrlKeySet = z.infer<typeof UrlKeySet>;

export function urlRingOf(set: UrlKeySet): KeyRing<Buffer> {
  return ringOf(set.keys, (key) => Buffer.from(key.secret, "base64url"));
}

export function generateUrlKey(): { kid: string; secret: string } {
  return { kid: randomBase62(8), secret: randomBytes(MIN_SECRET_BYTES).toString("base64url") };
}
