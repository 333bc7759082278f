import { createHmac, timingSafeEqual } from "node:crypto";
import { SANDBOX_SIGNATURE_HEADER } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";

function mac(secret: Buffer, timestamp: string, body: Buffer): Buffer {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest();
}

/** The signature header of `body` sent at `timestampSeconds`. */
export function signSandboxPayload(secret: Buffer, body: string | Buffer, timestampSeconds: number): string {
  const timestamp = String(Math.floor(timestampSeconds));
  return `t=${timestamp},v1=${mac(secret, timestamp, Buffer.from(body)).toString("hex")}`;
}

const invalid = (message: string) => new AppError("webhook.signature_invalid", message);

/**
 * Accepts the body only when the header's HMAC over `<t>.<body>` matches (compared in
 * constant time) and `t` is within `toleranceSeconds` of now, either way: an old delivery
 * replayed after that is refused even if its event was forgotten.
 */
export function verifySandboxSignature(
  secret: Buffer,
  body: Buffer,
  header: string | undefined,
  nowMs: number,
  toleranceSeconds: number,
): void {
  if (header === undefined) throw invalid(`The ${SANDBOX_SIGNATURE_HEADER} header is missing.`);
  const parts = new Map<string, string[]>();
  for (const item of header.split(",")) {
    const at = item.indexOf("=");
    if (at <= 0) continue;
    const name = item.slice(0, at).trim();
    parts.set(name, [...(parts.get(name) ?? []), item.slice(at + 1).trim()]);
  }
  const timestamp = parts.get("t")?.[0];
  const signatures = parts.get("v1") ?? [];
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp) || signatures.length === 0) {
    throw invalid(`The ${SANDBOX_SIGNATURE_HEADER} header is malformed.`);
  }
  const expected = mac(secret, timestamp, body);
  const matches = signatures.some((signature) => {
    if (!/^[0-9a-f]{64}$/.test(signature)) return false;
    return timingSafeEqual(Buffer.from(signature, "hex"), expected);
  });
  if (!matches) throw invalid("The webhook signature does not match its body.");
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > toleranceSeconds)
    throw invalid("The webhook signature's timestamp is outside the tolerance.");
}
