import { describe, expect, it } from "vitest";
import { checkKvKey, BUCKETS } from "../../../shared/nats/index.js";
import { idempotencyRecordKey, readIdempotencyKey, requestFingerprint } from "./idempotency-key.js";

const header = (value: string | undefined) => (name: string) => (name === "idempotency-key" ? value : undefined);
const scope = { app_id: "local", business_id: "biz_0000000000000000000A" };

describe("readIdempotencyKey", () => {
  it("answers undefined without the header, and the key when it is 1 to 255 printable ASCII characters", () => {
    expect(readIdempotencyKey(header(undefined))).toBeUndefined();
    for (const key of ["a", " ", "~", "k".repeat(255), "order 42/retry#1"])
      expect(readIdempotencyKey(header(key))).toBe(key);
  });

  it("refuses any other value with request.invalid naming the header", () => {
    for (const key of ["", "k".repeat(256), "a\tb", "clé", "\u007f", "日本"]) {
      expect(() => readIdempotencyKey(header(key)), JSON.stringify(key)).toThrow(
        expect.objectContaining({
          code: "request.invalid",
          details: { issues: [expect.objectContaining({ path: "Idempotency-Key" })] },
        }),
      );
    }
  });
});

describe("idempotencyRecordKey", () => {
  it("is a key of the bucket's shape whatever the key holds, one per business, and never the key itself", () => {
    const key = "a.b*c>d e";
    const recordKey = idempotencyRecordKey(scope, key);
    expect(checkKvKey(BUCKETS.idempotency, recordKey)).toBe(recordKey);
    expect(recordKey).not.toContain("a.b");
    expect(idempotencyRecordKey({ ...scope, business_id: "biz_0000000000000000000B" }, key)).not.toBe(recordKey);
    expect(idempotencyRecordKey(scope, `${key}!`)).not.toBe(recordKey);
  });
});

describe("requestFingerprint", () => {
  it("is the same for one body whatever its key order, and differs for another body or operation", () => {
    const body = { type: "shell", command: ["echo", "hi"], resources: { cpu: 1, memory_mb: 512 } };
    const reordered = { resources: { memory_mb: 512, cpu: 1 }, command: ["echo", "hi"], type: "shell" };
    expect(requestFingerprint("/submit", reordered)).toBe(requestFingerprint("/submit", body));
    expect(requestFingerprint("/submit", { ...body, command: ["hi", "echo"] })).not.toBe(
      requestFingerprint("/submit", body),
    );
    expect(requestFingerprint("/retry", body)).not.toBe(requestFingerprint("/submit", body));
  });
});
