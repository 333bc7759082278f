import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A random secret for a token: 32 bytes, base64url. */
export function newSecret(): string {
  return randomBytes(32).toString("base64url");
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Compares two hex digests in constant time. */
export function digestsEqual(left: string, right: string): boolean {
  const a = Buffer.from(left, "hex");
  const b = Buffer.from(right, "hex");
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}
