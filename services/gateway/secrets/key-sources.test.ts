import { generateKeyPairSync, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../shared/runtime/index.js";
import { GatewayConfig } from "../config.js";
import { configuredKeySets, JWT_KEYS, URL_KEYS } from "./key-sources.js";

function ed25519Jwk(kid: string, extra: Record<string, unknown> = {}) {
  return { ...generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" }), kid, ...extra };
}

function problemsOf(check: () => unknown): string[] {
  try {
    check();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe("signing keys given by a setting", () => {
  it("sign with the key marked current and keep the others as retired, with their ends", () => {
    const text = JSON.stringify({
      keys: [ed25519Jwk("old", { not_after: "2026-12-01T00:00:00Z" }), ed25519Jwk("new", { current: true })],
    });
    const ring = JWT_KEYS.parse(text, "CJS_JWT_SIGNING_KEYS");
    expect(ring.signer.kid).toBe("new");
    expect(ring.retired.map(({ kid, notAfterMs }) => [kid, notAfterMs])).toEqual([
      ["old", Date.parse("2026-12-01T00:00:00Z")],
    ]);
    expect(ring.signer.key.publicJwk).toMatchObject({ kid: "new", kty: "OKP", crv: "Ed25519", alg: "EdDSA" });
    expect(ring.signer.key.publicJwk).not.toHaveProperty("d");
  });

  it("accept a retired access-token key given by its public part only", () => {
    const { d: _private, ...publicOnly } = ed25519Jwk("old");
    const ring = JWT_KEYS.parse(JSON.stringify({ keys: [ed25519Jwk("new"), publicOnly] }), "CJS_JWT_SIGNING_KEYS");
    expect(ring.retired[0]?.key.privateKey).toBeNull();
  });

  it("refuse a set that cannot sign or is ambiguous, naming the variable", () => {
    const { d: _private, ...publicOnly } = ed25519Jwk("pub");
    const variable = "CJS_JWT_SIGNING_KEYS_FILE";
    expect(problemsOf(() => JWT_KEYS.parse(JSON.stringify({ keys: [publicOnly] }), variable))).toEqual([
      `${variable}: keys[0].d: the signing key needs its private part (d)`,
    ]);
    expect(problemsOf(() => JWT_KEYS.parse(JSON.stringify({ keys: [] }), variable))).toEqual([
      `${variable}: keys: lists no key`,
    ]);
    expect(
      problemsOf(() => JWT_KEYS.parse(JSON.stringify({ keys: [ed25519Jwk("a"), ed25519Jwk("a")] }), variable)),
    ).toEqual([`${variable}: keys[1].kid: key id a is listed twice`]);
    const twoCurrent = { keys: [ed25519Jwk("a", { current: true }), ed25519Jwk("b", { current: true })] };
    expect(problemsOf(() => JWT_KEYS.parse(JSON.stringify(twoCurrent), variable))).toEqual([
      `${variable}: keys: more than one key is marked current`,
    ]);
    const endedSigner = { keys: [ed25519Jwk("a", { not_after: "2026-01-01T00:00:00Z" })] };
    expect(problemsOf(() => JWT_KEYS.parse(JSON.stringify(endedSigner), variable))).toEqual([
      `${variable}: keys[0].not_after: the signing key cannot have an end`,
    ]);
    const broken = { keys: [{ ...ed25519Jwk("a"), d: "AAAA" }] };
    expect(problemsOf(() => JWT_KEYS.parse(JSON.stringify(broken), variable))).toEqual([
      `${variable}: a key is not a valid key of its kind`,
    ]);
  });

  it("never quote the secret text in a problem", () => {
    const secret = randomBytes(32).toString("base64url");
    for (const text of [
      `{"keys":[{"kid":"u1","secret":"${secret}"`,
      `{"keys":[{"kid":"u1","secret":"${secret}","extra":"${secret}"}]}`,
    ]) {
      const problems = problemsOf(() => URL_KEYS.parse(text, "CJS_URL_SIGNING_KEYS"));
      expect(problems.length).toBeGreaterThan(0);
      expect(problems.join("\n")).not.toContain(secret);
    }
  });

  it("take URL secrets of at least 32 bytes in canonical base64url", () => {
    const good = randomBytes(32).toString("base64url");
    expect(URL_KEYS.parse(JSON.stringify({ keys: [{ kid: "u1", secret: good }] }), "V").signer.key).toEqual(
      Buffer.from(good, "base64url"),
    );
    for (const secret of [
      randomBytes(16).toString("base64url"),
      `${good}=`,
      randomBytes(32).toString("hex").slice(0, 43) + "!",
    ]) {
      expect(problemsOf(() => URL_KEYS.parse(JSON.stringify({ keys: [{ kid: "u1", secret }] }), "V"))).toEqual([
        "V: keys[0].secret: a secret is base64url text of at least 32 random bytes",
      ]);
    }
  });

  it("come from NATS KV when neither setting is given, and refuse both at once", () => {
    expect(configuredKeySets(GatewayConfig.parse({}))).toEqual({ jwt: null, url: null });
    const inline = JSON.stringify({ keys: [{ kid: "u1", secret: randomBytes(32).toString("base64url") }] });
    const config = GatewayConfig.parse({
      CJS_URL_SIGNING_KEYS: inline,
      CJS_URL_SIGNING_KEYS_FILE: "/run/secrets/url.json",
      CJS_JWT_SIGNING_KEYS_FILE: "/nonexistent/jwt.json",
    });
    expect(problemsOf(() => configuredKeySets(config))).toEqual([
      "CJS_JWT_SIGNING_KEYS_FILE: cannot read /nonexistent/jwt.json (ENOENT)",
      "CJS_URL_SIGNING_KEYS_FILE: set it or CJS_URL_SIGNING_KEYS, not both",
    ]);
  });
});
