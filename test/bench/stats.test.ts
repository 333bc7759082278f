import { describe, expect, it } from "vitest";
import { percentile, percentiles, perSecond } from "./stats.js";

describe("bench statistics", () => {
  it("percentile is the nearest rank: the smallest value with p percent of the sample at or below it", () => {
    const sorted = Array.from({ length: 100 }, (_, index) => index + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 95)).toBe(95);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([1, 2, 3], 0)).toBe(1);
  });

  it("percentiles sorts a copy and answers null for an empty sample", () => {
    const sample = [30, 10, 20];
    expect(percentiles(sample)).toEqual({ p50: 20, p95: 30, p99: 30, max: 30 });
    expect(sample).toEqual([30, 10, 20]);
    expect(percentiles([])).toBeNull();
  });

  it("perSecond scales a count to one second and is 0 over no time", () => {
    expect(perSecond(50, 500)).toBe(100);
    expect(perSecond(5, 0)).toBe(0);
  });
});
