import { createHash } from "node:crypto";
import { IDEMPOTENCY_KEY_FORMAT, IDEMPOTENCY_KEY_HEADER } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { kvKey } from "../../../shared/nats/index.js";

/** The request's Idempotency-Key; `undefined` when none was sent. A value of another form is 400 `request.invalid` naming the header. */
export function readIdempotencyKey(requestHeader: (name: string) => string | undefined): string | undefined {
  const value = requestHeader(IDEMPOTENCY_KEY_HEADER.toLowerCase());
  if (value === undefined) return undefined;
  if (!IDEMPOTENCY_KEY_FORMAT.test(value)) {
    throw new AppError("request.invalid", "The Idempotency-Key header must be 1 to 255 printable ASCII characters.", {
      details: {
        issues: [{ path: IDEMPOTENCY_KEY_HEADER, message: "1 to 255 printable ASCII characters (0x20 to 0x7E)" }],
      },
    });
  }
  return value;
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/**
 * The KV key of an Idempotency-Key within one business: the key's SHA-256, since a client's
 * key may hold characters a KV key cannot, and its length is unbounded by KV's rules.
 */
export function idempotencyRecordKey(scope: { app_id: string; business_id: string }, key: string): string {
  return kvKey(scope.app_id, scope.business_id, sha256(key).toString("base64url"));
}

/** JSON with every object's keys sorted, so two bodies that mean the same have one text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, item]) => `${JSON.stringify(name)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** What makes two requests "the same": the operation's path and its validated body, hashed (SHA-256, hex). */
export function requestFingerprint(path: string, body: unknown): string {
  return sha256(`${path}\n${canonicalJson(body)}`).toString("hex");
}
