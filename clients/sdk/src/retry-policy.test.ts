import { describe, expect, it } from "vitest";
import { retryDelayMs } from "./retry-policy.js";

const policy = { maxRetries: 4, baseDelayMs: 100, maxDelayMs: 5000 };

describe("the wait before a retry", () => {
  it("doubles from the base when the answer names no Retry-After", () => {
    expect([1, 2, 3].map((retry) => retryDelayMs(policy, retry, undefined, () => 0))).toEqual([100, 200, 400]);
  });

  it("is what Retry-After asks, plus at most 20 % jitter", () => {
    expect(retryDelayMs(policy, 1, 2, () => 0)).toBe(2000);
    expect(retryDelayMs(policy, 1, 2, () => 0.999)).toBe(2400);
  });

  it("never passes the cap", () => {
    expect(retryDelayMs(policy, 10, undefined, () => 0.5)).toBe(5000);
    expect(retryDelayMs(policy, 1, 3600, () => 0)).toBe(5000);
  });
});
