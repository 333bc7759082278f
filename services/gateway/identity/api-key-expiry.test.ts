import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors/index.js";
import { hasExpired, keyExpiry } from "./api-key-expiry.js";

const NOW = Date.parse("2026-11-24T10:00:00.000Z");
const DAY_MS = 86_400_000;

function refusal(run: () => unknown): AppError | undefined {
  try {
    run();
  } catch (error) {
    return error as AppError;
  }
  return undefined;
}

describe("a new key's expiry", () => {
  it("is never without a request and a maximum, and the maximum without a request", () => {
    expect(keyExpiry(undefined, NOW, undefined)).toBeNull();
    expect(keyExpiry(undefined, NOW, 30)).toBe(new Date(NOW + 30 * DAY_MS).toISOString());
  });

  it("is the requested time when it lies in the future and within the maximum (the maximum itself included)", () => {
    expect(keyExpiry("2027-01-01T00:00:00Z", NOW, undefined)).toBe("2027-01-01T00:00:00.000Z");
    expect(keyExpiry(new Date(NOW + 30 * DAY_MS).toISOString(), NOW, 30)).toBe(
      new Date(NOW + 30 * DAY_MS).toISOString(),
    );
  });

  it("refuses now, the past and beyond the maximum with request.invalid on expires_at", () => {
    for (const [requested, max] of [
      [new Date(NOW).toISOString(), undefined],
      ["2020-01-01T00:00:00Z", 30],
      [new Date(NOW + 30 * DAY_MS + 1).toISOString(), 30],
    ] as const) {
      const error = refusal(() => keyExpiry(requested, NOW, max));
      expect(error?.code).toBe("request.invalid");
      expect(error?.details).toMatchObject({ issues: [{ path: "expires_at" }] });
    }
  });

  it("has passed from its instant on", () => {
    expect(hasExpired(null, NOW)).toBe(false);
    expect(hasExpired(new Date(NOW + 1).toISOString(), NOW)).toBe(false);
    expect(hasExpired(new Date(NOW).toISOString(), NOW)).toBe(true);
  });
});
