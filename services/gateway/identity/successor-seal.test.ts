import { describe, expect, it } from "vitest";
import { newSecret } from "./secrets.js";
import { openSuccessor, sealSuccessor } from "./successor-seal.js";

describe("the sealed successor of a refresh token", () => {
  it("opens with the spent token it was sealed with, in its own session, and with nothing else", () => {
    const spent = newSecret();
    const successor = newSecret();
    const sealed = sealSuccessor(successor, spent, "ses_a");

    expect(openSuccessor(sealed, spent, "ses_a")).toBe(successor);
    expect(openSuccessor(sealed, newSecret(), "ses_a")).toBeUndefined();
    expect(openSuccessor(sealed, spent, "ses_b")).toBeUndefined();
    expect(sealed).not.toContain(successor);
  });

  it("a seal altered in storage does not open", () => {
    const spent = newSecret();
    const sealed = Buffer.from(sealSuccessor(newSecret(), spent, "ses_a"), "base64url");
    sealed[sealed.length - 20]! ^= 1;
    expect(openSuccessor(sealed.toString("base64url"), spent, "ses_a")).toBeUndefined();
    expect(openSuccessor("short", spent, "ses_a")).toBeUndefined();
  });
});
