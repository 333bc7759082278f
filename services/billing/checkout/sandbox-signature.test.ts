import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors/index.js";
import { signSandboxPayload, verifySandboxSignature } from "./sandbox-signature.js";

const secret = randomBytes(32);
const body = Buffer.from('{"id":"evt_1","type":"checkout.completed"}');
const nowMs = 1_800_000_000_000;
const nowSeconds = nowMs / 1000;
const TOLERANCE_SECONDS = 300;

function codeOf(run: () => void): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
  return undefined;
}

describe("sandbox webhook signatures", () => {
  it("accept a body signed with the secret just now", () => {
    const header = signSandboxPayload(secret, body, nowSeconds);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(codeOf(() => verifySandboxSignature(secret, body, header, nowMs, TOLERANCE_SECONDS))).toBeUndefined();
  });

  it("accept a timestamp at the edge of the tolerance, either way", () => {
    for (const offset of [-TOLERANCE_SECONDS, TOLERANCE_SECONDS]) {
      const header = signSandboxPayload(secret, body, nowSeconds + offset);
      expect(codeOf(() => verifySandboxSignature(secret, body, header, nowMs, TOLERANCE_SECONDS))).toBeUndefined();
    }
  });

  it("refuse a body changed after signing", () => {
    const header = signSandboxPayload(secret, body, nowSeconds);
    const altered = Buffer.from(body.toString().replace("evt_1", "evt_2"));
    expect(codeOf(() => verifySandboxSignature(secret, altered, header, nowMs, TOLERANCE_SECONDS))).toBe(
      "webhook.signature_invalid",
    );
  });

  it("refuse a signature made with another secret", () => {
    const header = signSandboxPayload(randomBytes(32), body, nowSeconds);
    expect(codeOf(() => verifySandboxSignature(secret, body, header, nowMs, TOLERANCE_SECONDS))).toBe(
      "webhook.signature_invalid",
    );
  });

  it("refuse a timestamp changed after signing", () => {
    const header = signSandboxPayload(secret, body, nowSeconds).replace(/^t=\d+/, `t=${nowSeconds - 1}`);
    expect(codeOf(() => verifySandboxSignature(secret, body, header, nowMs, TOLERANCE_SECONDS))).toBe(
      "webhook.signature_invalid",
    );
  });

  it("refuse a correct signature older or newer than the tolerance", () => {
    for (const offset of [-TOLERANCE_SECONDS - 1, TOLERANCE_SECONDS + 1]) {
      const header = signSandboxPayload(secret, body, nowSeconds + offset);
      expect(codeOf(() => verifySandboxSignature(secret, body, header, nowMs, TOLERANCE_SECONDS))).toBe(
        "webhook.signature_invalid",
      );
    }
  });

  it("refuse a missing or malformed header", () => {
    for (const header of [
      undefined,
      "",
      "v1=abc",
      "t=now,v1=00",
      `t=${nowSeconds}`,
      `t=${nowSeconds},v1=${"z".repeat(64)}`,
    ]) {
      expect(codeOf(() => verifySandboxSignature(secret, body, header, nowMs, TOLERANCE_SECONDS))).toBe(
        "webhook.signature_invalid",
      );
    }
  });

  it("accept a header listing the right signature among others (secret rotation)", () => {
    const good = signSandboxPayload(secret, body, nowSeconds);
    const other = signSandboxPayload(randomBytes(32), body, nowSeconds).split(",")[1];
    expect(
      codeOf(() =>
        verifySandboxSignature(
          secret,
          body,
          `${good.split(",")[0]},${other},${good.split(",")[1]}`,
          nowMs,
          TOLERANCE_SECONDS,
        ),
      ),
    ).toBeUndefined();
  });
});
