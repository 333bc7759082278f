import { describe, expect, it } from "vitest";
import { SigningKeyRecord, UrlSigningKeyRecord } from "./key-records.js";
import { KV_JWT_KEYS, KV_URL_KEYS } from "./kv-keys.js";

const now = Date.parse("2026-12-01T00:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

describe("rotating a key record", () => {
  it("retires the signing key until the given end, drops retired keys past theirs, and keeps unknown fields", () => {
    const first = KV_JWT_KEYS.fresh(now - 3_600_000);
    const second = KV_JWT_KEYS.rotate(first, now - 3_600_000, now - 1000);
    const third = SigningKeyRecord.parse({
      ...KV_JWT_KEYS.rotate({ ...second, added_later: true }, now, now + 960_000),
    });
    expect(third.retired).toEqual([{ kid: second.kid, public_jwk: second.public_jwk, not_after: iso(now + 960_000) }]);
    expect(third).toMatchObject({ added_later: true, alg: "EdDSA" });
    expect(KV_JWT_KEYS.ring(third)).toMatchObject({
      signer: { kid: third.kid, notAfterMs: null },
      retired: [{ kid: second.kid, notAfterMs: now + 960_000 }],
    });
    expect(third.retired?.[0]?.public_jwk).not.toHaveProperty("d");
  });

  it("gives a URL secret made without an id the empty id once retired, so its URLs without kid still find it", () => {
    const legacy = UrlSigningKeyRecord.parse({
      secret: Buffer.alloc(32, 7).toString("base64url"),
      created_at: iso(now),
    });
    expect(KV_URL_KEYS.ring(legacy).signer.kid).toBe("");
    const rotated = KV_URL_KEYS.rotate(legacy, now, now + 60_000);
    const ring = KV_URL_KEYS.ring(rotated);
    expect(ring.signer.kid).toMatch(/^[A-Za-z0-9]{8}$/);
    expect(ring.retired).toEqual([{ kid: "", key: Buffer.alloc(32, 7), notAfterMs: now + 60_000 }]);
  });
});
