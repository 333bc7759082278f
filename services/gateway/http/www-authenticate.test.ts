import { describe, expect, it } from "vitest";
import { challengeOf } from "./www-authenticate.js";

describe("challengeOf", () => {
  it("says why an offered bearer token failed", () => {
    expect(challengeOf("auth.token_expired", "user", { authorization: "Bearer a.b.c" })).toBe(
      'Bearer error="invalid_token", error_description="expired"',
    );
    expect(challengeOf("auth.invalid_credentials", "jwt", { authorization: "bearer a.b.c" })).toBe(
      'Bearer error="invalid_token"',
    );
  });

  it("calls a token that cannot be read, or one sent beside a key, a malformed request", () => {
    expect(challengeOf("auth.invalid_credentials", "user", { authorization: "Bearer a b" })).toBe(
      'Bearer error="invalid_request"',
    );
    expect(challengeOf("auth.invalid_credentials", "user", { authorization: "Bearer a.b.c", apiKey: "cjs_x" })).toBe(
      'Bearer error="invalid_request"',
    );
  });

  it("is the bare Bearer challenge when no bearer token was offered", () => {
    expect(challengeOf("auth.missing_credentials", "user", {})).toBe("Bearer");
    expect(challengeOf("auth.invalid_credentials", "user", { apiKey: "cjs_x" })).toBe("Bearer");
    expect(challengeOf("auth.invalid_credentials", "user", { authorization: "Basic dTpw" })).toBe("Bearer");
    expect(challengeOf("auth.login_failed", "public", {})).toBe("Bearer");
    expect(challengeOf("app.unknown", undefined, {})).toBe("Bearer");
  });

  it("names the key header on routes that take only a node's key", () => {
    expect(challengeOf("auth.invalid_credentials", "node", { apiKey: "cjs_x" })).toBe('ApiKey header="X-API-Key"');
    expect(challengeOf("auth.missing_credentials", "node", {})).toBe('ApiKey header="X-API-Key"');
  });
});
