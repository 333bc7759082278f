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

  it("runs again after a pass that threw before returning its promise", async () => {
    let passes = 0;
    const runner = new Coalesced(() => {
      passes += 1;
      if (passes === 1) throw new Error("thrown at once");
      return Promise.resolve();
    });
    await expect(runner.run()).rejects.toThrow("thrown at once");
    await expect(runner.run()).resolves.toBeUndefined();
    expect(passes).toBe(2);
  });

  it("never loses a request made at any moment of a pass's ending", async () => {
    // A request can come from another promise chain while the pass's end is still being
    // handed through microtasks (a NATS watch's messages are): each depth is tried.
    for (let depth = 0; depth < 12; depth += 1) {
      const gated = gatedPass();
      const runner = new Coalesced(gated.pass);
      void runner.run();
      const asked = (async () => {
        for (let tick = 0; tick < depth; tick += 1) await Promise.resolve();
        void runner.run();
      })();
      gated.release();
      await asked;
      // Every chain above has settled well within this many turns (depth at most 12).
      for (let tick = 0; tick < 30; tick += 1) await Promise.resolve();
      // The request came after the first pass began, so a second pass must have begun after it.
      expect({ depth, began: gated.began() }).toEqual({ depth, began: 2 });
      gated.release();
      await runner.idle();
    }
  });
});
