import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors/index.js";
import { LiveRing, ringOfOne } from "../secrets/key-ring.js";
import { urlSigner } from "./signed-url.js";

let now = Date.parse("2026-06-01T00:00:00Z");
const clock = { now: () => now };
const signer = urlSigner(new LiveRing(ringOfOne("k1", randomBytes(32))), clock);

function query(text: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(text));
}

function codeOf(check: () => void): string | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    return error instanceof AppError ? error.code : "thrown";
  }
}

/** What the URLs of these tests may carry besides `expires` and `signature`. */
const PARAMS = ["scope", "app_id"];

describe("signed URLs", () => {
  const path = "/api/compute/artifacts/download/job_1/out.txt";

  it("accept the method and path they were signed for until they expire", () => {
    const signed = query(signer.sign({ method: "GET", path, expiresAtMs: now + 60_000 }));
    expect(codeOf(() => signer.verify("GET", path, signed, PARAMS))).toBeUndefined();
    now += 61_000;
    expect(codeOf(() => signer.verify("GET", path, signed, PARAMS))).toBe("url.expired");
  });

  it("refuse a signature whose text is not the canonical base64url of its bytes", () => {
    const signed = query(signer.sign({ method: "GET", path, expiresAtMs: now + 60_000 }));
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    // 32 bytes are 43 characters: the last carries 4 bits of the digest and 2 unused ones.
    const last = alphabet.indexOf(signed.signature!.at(-1)!);
    const base = signed.signature!.slice(0, -1);
    for (const unused of [1, 2, 3]) {
      const altered = `${base}${alphabet[last ^ unused]}`;
      expect(Buffer.from(altered, "base64url")).toEqual(Buffer.from(signed.signature!, "base64url"));
      expect(
        codeOf(() => signer.verify("GET", path, { ...signed, signature: altered }, PARAMS)),
        altered,
      ).toBe("url.signature_invalid");
    }
    for (const padded of [
      `${signed.signature}=`,
      `${signed.signature}.`,
      `${base.slice(0, 10)}!${base.slice(10)}${signed.signature!.at(-1)}`,
    ]) {
      expect(
        codeOf(() => signer.verify("GET", path, { ...signed, signature: padded }, PARAMS)),
        padded,
      ).toBe("url.signature_invalid");
    }
    expect(codeOf(() => signer.verify("GET", path, signed, PARAMS))).toBeUndefined();
  });

  it("refuse another path, another method, a changed expiry or a changed signature", () => {
    const signed = query(signer.sign({ method: "GET", path, expiresAtMs: now + 60_000 }));
    expect(codeOf(() => signer.verify("GET", `${path}x`, signed, PARAMS))).toBe("url.signature_invalid");
    expect(codeOf(() => signer.verify("PUT", path, signed, PARAMS))).toBe("url.signature_invalid");
    expect(
      codeOf(() => signer.verify("GET", path, { ...signed, expires: String(Number(signed.expires) + 3600) }, PARAMS)),
    ).toBe("url.signature_invalid");
    expect(codeOf(() => signer.verify("GET", path, { ...signed, signature: `${signed.signature}A` }, PARAMS))).toBe(
      "url.signature_invalid",
    );
    expect(codeOf(() => signer.verify("GET", path, {}, PARAMS))).toBe("url.signature_invalid");
  });

  it("with a prefix scope, cover every name under the prefix and nothing outside it", () => {
    const prefix = "/api/compute/artifacts/upload/job_1/";
    const signed = query(signer.sign({ method: "PUT", path: prefix, expiresAtMs: now + 60_000, prefix: true }));
    expect(codeOf(() => signer.verify("PUT", `${prefix}report.pdf`, signed, PARAMS))).toBeUndefined();
    expect(codeOf(() => signer.verify("PUT", "/api/compute/artifacts/upload/job_2/report.pdf", signed, PARAMS))).toBe(
      "url.signature_invalid",
    );
    expect(codeOf(() => signer.verify("PUT", `${prefix}report.pdf`, { ...signed, scope: undefined }, PARAMS))).toBe(
      "url.signature_invalid",
    );
  });

  it("refuse a parameter they were not signed with, or one given twice, even with a good signature", () => {
    const signed = query(signer.sign({ method: "GET", path, expiresAtMs: now + 60_000 }));
    expect(codeOf(() => signer.verify("GET", path, { ...signed, app_id: "local" }, PARAMS))).toBeUndefined();
    expect(codeOf(() => signer.verify("GET", path, { ...signed, download: "1" }, PARAMS))).toBe(
      "url.signature_invalid",
    );
    expect(codeOf(() => signer.verify("GET", path, { ...signed, app_id: ["local", "other"] }, PARAMS))).toBe(
      "url.signature_invalid",
    );
    expect(
      codeOf(() => signer.verify("GET", path, { ...signed, expires: [signed.expires, signed.expires] }, PARAMS)),
    ).toBe("url.signature_invalid");
    expect(codeOf(() => signer.verify("GET", path, { ...signed, "": "x" }, PARAMS))).toBe("url.signature_invalid");
  });
});

describe("signed URLs across a key rotation", () => {
  const path = "/api/compute/jobs/job_1/logs/stream";
  const [legacy, first, second] = [randomBytes(32), randomBytes(32), randomBytes(32)];

  it("name their key, and verify with it while it is current or retired before its end", () => {
    const keys = new LiveRing(ringOfOne("k1", first));
    const urls = urlSigner(keys, clock);
    const signed = query(urls.sign({ method: "GET", path, expiresAtMs: now + 600_000 }));
    expect(signed.kid).toBe("k1");
    keys.replace({
      signer: { kid: "k2", key: second, notAfterMs: null },
      retired: [{ kid: "k1", key: first, notAfterMs: now + 60_000 }],
    });
    expect(query(urls.sign({ method: "GET", path, expiresAtMs: now + 600_000 })).kid).toBe("k2");
    expect(codeOf(() => urls.verify("GET", path, signed, PARAMS))).toBeUndefined();
    now += 60_000;
    expect(codeOf(() => urls.verify("GET", path, signed, PARAMS))).toBe("url.signature_invalid");
  });

  it("without a kid (made before keys had ids) verify with the key without an id, also once it is retired", () => {
    const keys = new LiveRing(ringOfOne("", legacy));
    const urls = urlSigner(keys, clock);
    const signed = query(urls.sign({ method: "GET", path, expiresAtMs: now + 600_000 }));
    expect(signed).not.toHaveProperty("kid");
    keys.replace({
      signer: { kid: "k2", key: second, notAfterMs: null },
      retired: [{ kid: "", key: legacy, notAfterMs: now + 60_000 }],
    });
    expect(codeOf(() => urls.verify("GET", path, signed, PARAMS))).toBeUndefined();
    // Naming the new key does not make the old signature pass.
    expect(codeOf(() => urls.verify("GET", path, { ...signed, kid: "k2" }, PARAMS))).toBe("url.signature_invalid");
  });

  it("refuse a kid no accepted key has, an empty one, or one that is not a key id", () => {
    const urls = urlSigner(new LiveRing(ringOfOne("k1", first)), clock);
    const signed = query(urls.sign({ method: "GET", path, expiresAtMs: now + 600_000 }));
    for (const kid of ["k9", "", "k 1", "x".repeat(65)]) {
      expect(
        codeOf(() => urls.verify("GET", path, { ...signed, kid }, PARAMS)),
        kid,
      ).toBe("url.signature_invalid");
    }
    const { kid: _dropped, ...withoutKid } = signed;
    expect(codeOf(() => urls.verify("GET", path, withoutKid, PARAMS))).toBe("url.signature_invalid");
  });
});
