import { describe, expect, it } from "vitest";
import { KeyedPacer, type PacePolicy, takeTokens } from "./pacer.js";

const policy: PacePolicy = { perSecond: 10, burst: 3 };
const T0 = 1_000_000;

describe("takeTokens", () => {
  it("a key never seen starts full: up to the burst goes at once, the next waits one interval", () => {
    let bucket = undefined as ReturnType<typeof takeTokens>["bucket"] | undefined;
    const waits: number[] = [];
    for (let index = 0; index < 5; index += 1) {
      const taken = takeTokens(bucket, T0, 1, policy);
      bucket = taken.bucket;
      waits.push(taken.waitMs);
    }
    expect(waits).toEqual([0, 0, 0, 100, 200]);
  });

  it("refills at its rate, never above the burst", () => {
    const spent = takeTokens(undefined, T0, 3, policy).bucket;
    expect(takeTokens(spent, T0 + 100, 1, policy).waitMs).toBe(0);
    expect(takeTokens(spent, T0 + 60_000, 4, policy)).toMatchObject({ waitMs: 100, bucket: { tokens: -1 } });
  });

  it("a take larger than the burst still goes, after the wait that refills it", () => {
    expect(takeTokens(undefined, T0, 13, policy).waitMs).toBe(1_000);
  });

  it("a negative take gives tokens back, so the next taker waits less", () => {
    const owing = takeTokens(undefined, T0, 5, policy).bucket;
    const refunded = takeTokens(owing, T0, -2, policy).bucket;
    expect(takeTokens(refunded, T0, 1, policy).waitMs).toBe(100);
  });

  it("is pure: the bucket it was given is left as it was", () => {
    const bucket = { tokens: 2, atMs: T0 };
    takeTokens(bucket, T0 + 500, 2, policy);
    expect(bucket).toEqual({ tokens: 2, atMs: T0 });
  });
});

describe("KeyedPacer", () => {
  it("keys are paced apart: one key's debt never delays another", async () => {
    const pacer = new KeyedPacer({ perSecond: 1, burst: 1 }, () => T0);
    expect(await pacer.take("a", 1)).toBe(0);
    const cancel = Promise.resolve();
    expect(await pacer.take("a", 1, cancel)).toBe(1_000);
    expect(await pacer.take("b", 1)).toBe(0);
  });

  it("a cancelled take stops waiting at once, still counted as the wait it was given", async () => {
    const pacer = new KeyedPacer({ perSecond: 1, burst: 1 }, () => T0);
    await pacer.take("a", 1);
    let cancel: () => void = () => undefined;
    const cancelled = new Promise<void>((resolve) => {
      cancel = resolve;
    });
    const waiting = pacer.take("a", 100, cancelled);
    cancel();
    await expect(waiting).resolves.toBe(100_000);
  });
});

describe("KeyedPacer turns", () => {
  it("one key's turns run one at a time, in order; another key's run meanwhile", async () => {
    const pacer = new KeyedPacer({ perSecond: 1, burst: 1 });
    const events: string[] = [];
    let finishFirst: () => void = () => undefined;
    const first = pacer.inTurn("a", async () => {
      events.push("a1 start");
      await new Promise<void>((resolve) => (finishFirst = resolve));
      events.push("a1 end");
    });
    const second = pacer.inTurn("a", async () => void events.push("a2"));
    await pacer.inTurn("b", async () => void events.push("b1"));
    finishFirst();
    await Promise.all([first, second]);
    expect(events).toEqual(["a1 start", "b1", "a1 end", "a2"]);
  });

  it("a turn that throws hands on to the next", async () => {
    const pacer = new KeyedPacer({ perSecond: 1, burst: 1 });
    await expect(pacer.inTurn("a", () => Promise.reject(new Error("read failed")))).rejects.toThrow("read failed");
    await expect(pacer.inTurn("a", async () => "next")).resolves.toBe("next");
  });
});
