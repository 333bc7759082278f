import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

const INFO = "cjs refresh-token successor";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The AES-256 key only the holder of `secret` can derive; `sessionId` binds it to its session. */
function keyOf(secret: string, sessionId: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, sessionId, INFO, 32));
}

/**
 * Seals a refresh token's successor (its secret) with a key derived from the token it
 * replaces. The session record keeps only hashes and this seal, so the store alone never
 * gives a usable token: only the one who presents the spent token can open it again.
 */
export function sealSuccessor(successor: string, spent: string, sessionId: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", keyOf(spent, sessionId), iv);
  const sealed = Buffer.concat([cipher.update(successor, "utf8"), cipher.final()]);
  return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString("base64url");
}

/** The successor sealed with `spent`; undefined when `spent` is not the token it was sealed with. */
export function openSuccessor(sealed: string, spent: string, sessionId: string): string | undefined {
  const bytes = Buffer.from(sealed, "base64url");
  if (bytes.length < IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyOf(spent, sessionId), bytes.subarray(0, IV_BYTES));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]).toString("utf8");
  } catch {
    return undefined;
  }
}
