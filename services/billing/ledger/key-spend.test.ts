import { describe, expect, it } from "vitest";
import { addKeySpend, keySpendIn, monthOf, nextMonthStart } from "./key-spend.js";

const NOV_30_LATE = Date.parse("2026-11-30T23:59:59.999Z");
const DEC_1 = Date.parse("2026-12-01T00:00:00.000Z");

describe("a key's monthly spend", () => {
  it("names the calendar month in UTC and when the next one starts, across a year's end", () => {
    expect(monthOf(NOV_30_LATE)).toBe("2026-11");
    expect(monthOf(DEC_1)).toBe("2026-12");
    expect(nextMonthStart(NOV_30_LATE)).toBe("2026-12-01T00:00:00.000Z");
    expect(nextMonthStart(Date.parse("2026-12-15T12:00:00Z"))).toBe("2027-01-01T00:00:00.000Z");
  });

  it("adds charges per key within a month and starts over in a new one", () => {
    const november = addKeySpend(
      addKeySpend(addKeySpend(null, "2026-11", "key_a", 5), "2026-11", "key_a", 7),
      "2026-11",
      "key_b",
      1,
    );
    expect(november).toEqual({ month: "2026-11", micros: { key_a: 12, key_b: 1 } });
    expect(addKeySpend(november, "2026-12", "key_b", 3)).toEqual({ month: "2026-12", micros: { key_b: 3 } });
  });

  it("reads nothing for a month the record does not hold", () => {
    const november = addKeySpend(undefined, "2026-11", "key_a", 5);
    expect(keySpendIn(november, "2026-11")).toEqual({ key_a: 5 });
    expect(keySpendIn(november, "2026-12")).toEqual({});
    expect(keySpendIn(null, "2026-12")).toEqual({});
  });
});
