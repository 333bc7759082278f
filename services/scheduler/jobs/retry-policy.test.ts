import { describe, expect, it } from "vitest";
import { RetryPolicy } from "../../../shared/contract/index.js";
import { backoffMs, retryMatches } from "./retry-policy.js";

const exit = (code: number) => ({ exit_code: code, error: { code: "job.exit_nonzero", message: `exit ${code}` } });
const timedOut = { exit_code: null, error: { code: "job.timed_out", message: "too long" } };

describe("backoffMs", () => {
  const backoff = { initial_seconds: 10, factor: 2, max_seconds: 60, jitter: 0 };

  it("starts at initial_seconds and multiplies by factor per retry made", () => {
    expect([0, 1, 2].map((count) => backoffMs(backoff, count, () => 0))).toEqual([10_000, 20_000, 40_000]);
  });

  it("is capped at max_seconds", () => {
    expect(backoffMs(backoff, 3, () => 0)).toBe(60_000);
    expect(backoffMs(backoff, 19, () => 0)).toBe(60_000);
  });

  it("adds at most the jitter share of the capped delay, as the random source says", () => {
    const jittered = { ...backoff, jitter: 0.5 };
    expect(backoffMs(jittered, 0, () => 0)).toBe(10_000);
    expect(backoffMs(jittered, 0, () => 0.5)).toBe(12_500);
    expect(backoffMs(jittered, 5, () => 0.999)).toBeLessThan(90_000);
    expect(backoffMs(jittered, 5, () => 0.999)).toBeGreaterThan(89_000);
  });

  it("is zero with initial_seconds 0", () => {
    expect(backoffMs({ ...backoff, initial_seconds: 0, jitter: 1 }, 4, () => 0.7)).toBe(0);
  });

  it("takes the contract's defaults", () => {
    const policy = RetryPolicy.parse({ max_retries: 1 });
    expect(backoffMs(policy.backoff, 0, () => 0)).toBe(10_000);
  });
});

describe("retryMatches", () => {
  it("without lists, every failure matches", () => {
    const policy = RetryPolicy.parse({ max_retries: 1 });
    expect(retryMatches(policy, exit(1))).toBe(true);
    expect(retryMatches(policy, timedOut)).toBe(true);
  });

  it("on_exit_codes: only an attempt whose exit code is listed", () => {
    const policy = RetryPolicy.parse({ max_retries: 1, on_exit_codes: [75] });
    expect(retryMatches(policy, exit(75))).toBe(true);
    expect(retryMatches(policy, exit(1))).toBe(false);
    expect(retryMatches(policy, timedOut)).toBe(false);
  });

  it("on_codes: only an attempt whose error code is listed", () => {
    const policy = RetryPolicy.parse({ max_retries: 1, on_codes: ["job.timed_out", "node.lost"] });
    expect(retryMatches(policy, timedOut)).toBe(true);
    expect(retryMatches(policy, { exit_code: null, error: { code: "node.lost", message: "gone" } })).toBe(true);
    expect(retryMatches(policy, exit(1))).toBe(false);
  });

  it("both lists: either one matching is enough", () => {
    const policy = RetryPolicy.parse({ max_retries: 1, on_exit_codes: [75], on_codes: ["job.timed_out"] });
    expect(retryMatches(policy, exit(75))).toBe(true);
    expect(retryMatches(policy, timedOut)).toBe(true);
    expect(retryMatches(policy, exit(1))).toBe(false);
  });
});
