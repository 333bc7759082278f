import { describe, expect, it } from "vitest";
import { signatureHeader, webhookSecret } from "../../services/webhooks/secrets.js";
import { documentedVerifier } from "../harness/webhook-verifier.js";

const verify = documentedVerifier();
const secret = webhookSecret(Buffer.from("k".repeat(32)), "whk_0123456789ABCDEFGHIJ", "salt");
const body = JSON.stringify({
  id: "evt_1",
  type: "job.succeeded",
  created_at: "2026-11-24T04:00:00.000Z",
  data: { job: null },
});
const now = 1_795_000_000;

describe("the verification snippet of docs/webhooks.md", () => {
  it("accepts what the service signs", () => {
    expect(verify(secret, signatureHeader(secret, now, body), body, now)).toBe(true);
  });

  it("refuses another body, another secret, or a signature more than 5 minutes old", () => {
    const header = signatureHeader(secret, now, body);
    expect(verify(secret, header, `${body} `, now)).toBe(false);
    expect(
      verify(webhookSecret(Buffer.from("k".repeat(32)), "whk_0123456789ABCDEFGHIJ", "other"), header, body, now),
    ).toBe(false);
    expect(verify(secret, header, body, now + 301)).toBe(false);
    expect(verify(secret, header, body, now + 299)).toBe(true);
    expect(verify(secret, "t=abc,v1=00", body, now)).toBe(false);
  });
});
