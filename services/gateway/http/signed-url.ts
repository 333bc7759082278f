import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from "node:crypto";
import { AppError } from "../../../shared/errors/index.js";
import type { Clock } from "../../../shared/runtime/index.js";
import { acceptedKey, type LiveRing } from "../secrets/key-ring.js";
import { Kid } from "../secrets/key-set-format.js";

/**
 * The parameters the signer itself adds to every URL (`scope` only to a prefix signature,
 * and named by its callers). `kid` names the key; a URL without it was signed by the key
 * without an id (one made before keys had ids), so URLs handed out then keep working.
 */
const OWN_PARAMS: readonly string[] = ["expires", "signature", "kid"];

export interface SignedUrlRequest {
  method: "GET" | "PUT";
  /** The exact path, or with `prefix` the path every signed URL must start with. */
  path: string;
  expiresAtMs: number;
  /** Sign a path prefix: one URL signature covers every path under it (an agent's uploads for a job). */
  prefix?: boolean;
}

export interface UrlSigner {
  /** The query string (`expires=…&signature=…[&kid=…][&scope=prefix]`) that authorises the request. */
  sign(request: SignedUrlRequest): string;
  /**
   * Throws `url.expired` or `url.signature_invalid` unless the query authorises this method
   * and path now. The query may hold `expires`, `signature` and the names in `params`, each
   * once: any other or repeated parameter is refused, so nothing rides along unsigned.
   */
  verify(method: string, path: string, query: Record<string, unknown>, params: readonly string[]): void;
}

/** Each key imported once: an HMAC of a raw Buffer imports the key again on every call, five times the cost of the hash. */
const importedKeys = new WeakMap<Buffer, KeyObject>();

function digest(secret: Buffer, method: string, scope: string, expires: string): Buffer {
  let key = importedKeys.get(secret);
  if (key === undefined) {
    key = createSecretKey(secret);
    importedKeys.set(secret, key);
  }
  return createHmac("sha256", key).update(`${method}\n${scope}\n${expires}`).digest();
}

/**
 * URLs that carry their own authority: an HMAC over method, path (or path prefix) and
 * expiry. Changing any of them, or using it after the expiry, is refused with 403.
 */
export function urlSigner(keys: LiveRing<Buffer>, clock: Clock): UrlSigner {
  return {
    sign({ method, path, expiresAtMs, prefix = false }) {
      const { kid, key } = keys.current.signer;
      const expires = String(Math.floor(expiresAtMs / 1000));
      const signature = digest(key, method, prefix ? `${path}*` : path, expires).toString("base64url");
      return `expires=${expires}&signature=${signature}${kid === "" ? "" : `&kid=${kid}`}${prefix ? "&scope=prefix" : ""}`;
    },
    verify(method, path, query, params) {
      // A name given twice reads as a list, so it is refused here too.
      const foreign = Object.entries(query).some(
        ([name, value]) => typeof value !== "string" || !(OWN_PARAMS.includes(name) || params.includes(name)),
      );
      if (foreign)
        throw new AppError(
          "url.signature_invalid",
          "This URL carries a parameter it was not signed with, or one twice.",
        );
      const { expires, signature, scope, kid } = query;
      if (
        typeof expires !== "string" ||
        typeof signature !== "string" ||
        !/^\d{1,12}$/.test(expires) ||
        (kid !== undefined && !Kid.safeParse(kid).success)
      ) {
        throw new AppError("url.signature_invalid", "This URL is not a valid signed URL.");
      }
      // A key retired past its end, or removed, answers as a wrong signature: the URL proves nothing.
      const secret = acceptedKey(keys.current, typeof kid === "string" ? kid : "", clock.now());
      if (secret === undefined)
        throw new AppError(
          "url.signature_invalid",
          "This URL was signed with a key that is no longer accepted; ask for a new one.",
        );
      // With a prefix scope the signature covers the path minus its last segment.
      const signedScope = scope === "prefix" ? `${path.slice(0, path.lastIndexOf("/") + 1)}*` : path;
      const expected = digest(secret, method, signedScope, expires);
      // The decoder ignores the unused low bits of the last character and any character
      // outside the alphabet: only the canonical text of the bytes is the signature.
      const presented = Buffer.from(signature, "base64url");
      const canonical = presented.toString("base64url") === signature;
      if (!canonical || presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
        throw new AppError("url.signature_invalid", "This URL was altered or is not for this method and path.");
      }
      if (Number(expires) * 1000 <= clock.now())
        throw new AppError("url.expired", "This URL has expired; ask for a new one.");
    },
  };
}
