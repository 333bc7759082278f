import { describe, expect, it } from "vitest";
import { QuotaMemo } from "./quota-memo.js";

describe("QuotaMemo", () => {
  function memoAt(start: number) {
    const clock = { nowMs: start, now: () => clock.nowMs };
    return { clock, memo: new QuotaMemo(clock) };
  }

  it("asks once a minute per key", async () => {
    const { clock, memo } = memoAt(0);
    let asked = 0;
    const ask = () => Promise.resolve((asked += 1) * 100);
    expect(await memo.get("a", ask, () => undefined)).toBe(100);
    clock.nowMs = 59_999;
    expect(await memo.get("a", ask, () => undefined)).toBe(100);
    expect(await memo.get("b", ask, () => undefined)).toBe(200);
    clock.nowMs = 60_000;
    expect(await memo.get("a", ask, () => undefined)).toBe(300);
  });

  it("keeps the last answer while the owner does not answer, or none, and asks again after 5 s", async () => {
    const { clock, memo } = memoAt(0);
    const failures: unknown[] = [];
    const fail = () => Promise.reject(new Error("billing is down"));
    expect(await memo.get("new", fail, (error) => failures.push(error))).toBeNull();
    expect(
      await memo.get(
        "known",
        () => Promise.resolve(7),
        () => undefined,
      ),
    ).toBe(7);
    clock.nowMs = 60_000;
    expect(await memo.get("known", fail, (error) => failures.push(error))).toBe(7);
    clock.nowMs = 64_999;
    expect(
      await memo.get(
        "known",
        () => Promise.resolve(9),
        () => undefined,
      ),
    ).toBe(7);
    clock.nowMs = 65_000;
    expect(
      await memo.get(
        "known",
        () => Promise.resolve(9),
        () => undefined,
      ),
    ).toBe(9);
    expect(failures).toHaveLength(2);
  });
});
