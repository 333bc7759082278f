import { describe, expect, it } from "vitest";
import { comparisonTable, formatNumber, formatSpread, roundRatios, spread } from "./compare.js";

describe("bench comparisons", () => {
  it("spread is min, lower median and max of the finite values", () => {
    expect(spread([3, 1, 2])).toEqual({ min: 1, median: 2, max: 3 });
    expect(spread([4, 1, 3, 2])).toEqual({ min: 1, median: 2, max: 4 });
    expect(spread([5, Number.NaN, 1])).toEqual({ min: 1, median: 1, max: 5 });
    expect(spread([Number.NaN])).toBeNull();
  });

  it("ratios pair the sides round by round, NaN where the other side has none or 0", () => {
    expect(roundRatios([10, 20, 30], [5, 40, 0])).toEqual([2, 0.5, Number.NaN]);
    expect(roundRatios([1, 2], [1])).toEqual([1, Number.NaN]);
  });

  it("a ratio's spread is taken over the rounds' ratios, not over the ratio of the sides' spreads", () => {
    // Round 1: 10 ÷ 10, round 2: 20 ÷ 40. The medians' ratio would be 10 ÷ 10; the rounds say 0.5 to 1.
    const table = comparisonTable("t", "them", [{ label: "x", ours: [10, 20], theirs: [10, 40] }], []);
    expect(table.rows[0]).toEqual(["x", "10.0 / 10.0 / 20.0", "10.0 / 10.0 / 40.0", "0.50 / 0.50 / 1.00"]);
  });

  it("numbers keep three significant digits and never an exponent", () => {
    expect([1234.5, 12.345, 1.2345, 0.012345, 0, -5].map(formatNumber)).toEqual([
      "1235",
      "12.3",
      "1.23",
      "0.012",
      "0",
      "-5.00",
    ]);
    expect(formatNumber(Number.NaN)).toBe("–");
    expect(formatSpread([])).toBe("–");
  });
});
