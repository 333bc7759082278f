import { describe, expect, it } from "vitest";
import { Coalesced } from "./coalesced.js";

/** A pass that waits until released, counting how many began. */
function gatedPass() {
  let began = 0;
  const gates: Array<() => void> = [];
  const pass = () => {
    began += 1;
    return new Promise<void>((resolve) => gates.push(resolve));
  };
  return { pass, began: () => began, release: () => gates.shift()?.() };
}

describe("Coalesced", () => {
  it("runs requests made during a pass as one more pass after it, never side by side", async () => {
    const gated = gatedPass();
    const runner = new Coalesced(gated.pass);
    const first = runner.run();
    runner.run();
    runner.run();
    expect(gated.began()).toBe(1);
    gated.release();
    await Promise.resolve();
    await Promise.resolve();
    expect(gated.began()).toBe(2);
    gated.release();
    await first;
    expect(gated.began()).toBe(2);
  });

  it("starts afresh once idle", async () => {
    let passes = 0;
    const runner = new Coalesced(async () => void (passes += 1));
    await runner.run();
    await runner.run();
    expect(passes).toBe(2);
    await runner.idle();
  });

  it("lets a failed pass reject its callers and runs again when asked", async () => {
    let fail = true;
    const runner = new Coalesced(async () => {
      if (fail) throw new Error("broker away");
    });
    await expect(runner.run()).rejects.toThrow("broker away");
    fail = false;
    await expect(runner.run()).resolves.toBeUndefined();
  });
});
