import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { AppError } from "../../../shared/errors/index.js";
import type { JsonBucket } from "../../../shared/nats/index.js";
import type { Clock } from "../../../shared/runtime/index.js";

/** The HMAC key every gateway replica signs URLs with, kept beside the JWT key. */
export const UrlSigningKeyRecord = z.object({ secret: z.string(), created_at: z.string() });
export type UrlSigningKeyRecord = z.infer<typeof UrlSigningKeyRecord>;

const KEY_NAME = "url-hmac";

/** The parameters the signer itself adds to every URL (`scope` only to a prefix signature, and named by its callers). */
const OWN_PARAMS: readonly string[] = ["expires", "signature"];

export interface SignedUrlRequest {
  method: "GET" | "PUT";
  /** The exact path, or with `prefix` the path every signed URL must start with. */
  path: string;
  expiresAtMs: number;
  /** Sign a path prefix: one URL signature covers every path under it (an agent's uploads for a job). */
  prefix?: boolean;
}

export interface UrlSigner {
  /** The query string (`expires=…&signature=…[&scope=prefix]`) that authorises the request. */
  sign(request: SignedUrlRequest): string;
  /**
   * Throws `url.expired` or `url.signature_invalid` unless the query authorises this method
   * and path now. The query may hold `expires`, `signature` and the names in `params`, each
   * once: any other or repeated parameter is refused, so nothing rides along unsigned.
   */
  verify(method: string, path: string, query: Record<string, unknown>, params: readonly string[]): void;
}

function digest(secret: Buffer, method: string, scope: string, expires: string): Buffer {
  return createHmac("sha256", secret).update(`${method}\n${scope}\n${expires}`).digest();
}

/** The secret shared by every gateway replica, created by whichever starts first. */
export async function loadUrlSigningSecret(bucket: JsonBucket<typeof UrlSigningKeyRecord>, clock: Clock): Promise<Buffer> {
  let record = (await bucket.get(KEY_NAME))?.value;
  if (!record) {
    const fresh = { secret: randomBytes(32).toString("base64url"), created_at: new Date(clock.now()).toISOString() };
    try {
      await bucket.create(KEY_NAME, fresh);
      record = fresh;
    } catch {
      // Another replica made it first.
      record = (await bucket.get(KEY_NAME))?.value;
    }
    if (!record) throw new Error("URL signing key could not be created or read");
  }
  return Buffer.from(record.secret, "base64url");
}

/**
 * URLs that carry their own authority: an HMAC over method, path (or path prefix) and
 * expiry. Changing any of them, or using it after the expiry, is refused with 403.
 */
export function urlSigner(secret: Buffer, clock: Clock): UrlSigner {
  return {
    sign({ method, path, expiresAtMs, prefix = false }) {
      const expires = String(Math.floor(expiresAtMs / 1000));
      const signature = digest(secret, method, prefix ? `${path}*` : path, expires).toString("base64url");
      return `expires=${expires}&signature=${signature}${prefix ? "&scope=prefix" : ""}`;
    },
    verify(method, path, query, params) {
      // A name given twice reads as a list, so it is refused here too.
      const foreign = Object.entries(query).some(([name, value]) => typeof value !== "string" || !(OWN_PARAMS.includes(name) || params.includes(name)));
      if (foreign) throw new AppError("url.signature_invalid", "This URL carries a parameter it was not signed with, or one twice.");
      const { expires, signature, scope } = query;
      if (typeof expires !== "string" || typeof signature !== "string" || !/^\d{1,12}$/.test(expires)) {
        throw new AppError("url.signature_invalid", "This URL is not a valid signed URL.");
      }
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
      if (Number(expires) * 1000 <= clock.now()) throw new AppError("url.expired", "This URL has expired; ask for a new one.");
    },
  };
}
