import { describe, expect, it } from "vitest";
import { API_KEY_PREFIX, apiKeyMatches, mintApiKey, parseApiKey } from "./api-key-format.js";

describe("API key format", () => {
  it("mints `<prefix>_<key>` with the id inside and a hint of the last four characters", () => {
    const minted = mintApiKey();
    expect(minted.key.startsWith(`${API_KEY_PREFIX}_`)).toBe(true);
    expect(minted.key).toHaveLength(API_KEY_PREFIX.length + 1 + 58);
    expect(minted.hint).toBe(minted.key.slice(-4));
    expect(parseApiKey(minted.key)).toEqual({ keyId: minted.keyId });
  });

  it("never mints the same key twice", () => {
    const keys = new Set(Array.from({ length: 1000 }, () => mintApiKey().key));
    expect(keys.size).toBe(1000);
  });

  it("stores a hash that is not the key and matches only the key", () => {
    const minted = mintApiKey();
    expect(minted.hash).not.toContain(minted.key);
    expect(apiKeyMatches(minted.key, minted.hash)).toBe(true);
    expect(apiKeyMatches(mintApiKey().key, minted.hash)).toBe(false);
  });

  it("refuses a key whose checksum does not match (one character changed)", () => {
    const { key } = mintApiKey();
    const position = key.length - 10;
    const altered = key.slice(0, position) + (key[position] === "a" ? "b" : "a") + key.slice(position + 1);
    expect(parseApiKey(altered)).toBeNull();
  });

  it.each(["", "cjs_", "xyz_" + "a".repeat(58), mintApiKey().key + "x", "Bearer something"])(
    "refuses malformed text %j",
    (text) => {
      expect(parseApiKey(text)).toBeNull();
    },
  );
});
