import { describe, expect, it } from "vitest";
import { forEachBounded } from "./for-each-bounded.js";

/** A call that stays in flight until the test lets it go. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("forEachBounded", () => {
  it("never has more than the limit in flight, and calls every item once", async () => {
    const gates = Array.from({ length: 5 }, gate);
    let inFlight = 0;
    let most = 0;
    const seen: number[] = [];
    const done = forEachBounded([0, 1, 2, 3, 4], 2, async (index) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      seen.push(index);
      await gates[index]!.opened;
      inFlight -= 1;
    });
    for (const each of gates) each.open();
    await done;
    expect(most).toBe(2);
    expect(seen.sort()).toEqual([0, 1, 2, 3, 4]);
  });

  it("lets every call settle, then rejects with the first failure", async () => {
    const finished: number[] = [];
    const run = forEachBounded([1, 2, 3], 3, async (value) => {
      if (value === 2) throw new Error("two");
      finished.push(value);
    });
    await expect(run).rejects.toThrow("two");
    expect(finished.sort()).toEqual([1, 3]);
  });

  it("resolves at once for no items", async () => {
    await expect(forEachBounded([], 4, async () => {})).resolves.toBeUndefined();
  });
});
