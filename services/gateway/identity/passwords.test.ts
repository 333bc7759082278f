import { describe, expect, it } from "vitest";
import { decoyPasswordHash, hashPassword, verifyPassword } from "./passwords.js";

describe("passwords", () => {
  it("verifies the password it hashed and nothing else", async () => {
    const stored = await hashPassword("correct horse battery staple");
    expect(stored.startsWith("scrypt$")).toBe(true);
    expect(stored).not.toContain("correct horse");
    await expect(verifyPassword("correct horse battery staple", stored)).resolves.toBe(true);
    await expect(verifyPassword("correct horse battery stapler", stored)).resolves.toBe(false);
  });

  it("salts each hash, so equal passwords give different hashes", async () => {
    expect(await hashPassword("same password!")).not.toBe(await hashPassword("same password!"));
  });

  it("refuses a malformed stored hash instead of throwing", async () => {
    await expect(verifyPassword("x", "not-a-hash")).resolves.toBe(false);
  });

  it("the decoy hash verifies no guessable password", async () => {
    await expect(verifyPassword("", await decoyPasswordHash())).resolves.toBe(false);
  });
});
