import { describe, expect, it } from "vitest";
import { bearerToken, offersBearer } from "./bearer-token.js";

describe("bearerToken", () => {
  it.each([
    "Bearer abc.def-ghi_jkl",
    "bearer abc.def-ghi_jkl",
    "BEARER abc.def-ghi_jkl",
    "Bearer \t  abc.def-ghi_jkl",
    "  Bearer abc.def-ghi_jkl  ",
  ])("reads the token of %j", (header) => {
    expect(bearerToken(header)).toBe("abc.def-ghi_jkl");
  });

  it("keeps the token68 characters and trailing padding", () => {
    expect(bearerToken("Bearer a+b/c~d==")).toBe("a+b/c~d==");
  });

  it.each(["Bearer", "Bearer ", "Bearerabc", "Basic abc", "Bearer a b", "Bearer a=b", "Bearer abc,", "Token abc"])(
    "reads no token in %j",
    (header) => {
      expect(bearerToken(header)).toBeUndefined();
    },
  );
});

describe("offersBearer", () => {
  it("is true for the Bearer scheme in any case, with or without a token", () => {
    expect(offersBearer("bearer x")).toBe(true);
    expect(offersBearer("BEARER")).toBe(true);
    expect(offersBearer("Bearer a b")).toBe(true);
  });

  it("is false for another scheme or no header", () => {
    expect(offersBearer("Basic abc")).toBe(false);
    expect(offersBearer("Bearerish abc")).toBe(false);
    expect(offersBearer(undefined)).toBe(false);
  });
});
