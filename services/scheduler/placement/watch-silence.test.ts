import { describe, expect, it } from "vitest";
import { WatchSilence } from "./watch-silence.js";

describe("WatchSilence", () => {
  it("is silent when nothing came between two checks while revisions past the last one heard were stored", () => {
    const silence = new WatchSilence(10);
    silence.heard(11);
    expect(silence.check(14)).toBe(false);
    expect(silence.check(15)).toBe(true);
    expect(silence.seen).toBe(11);
  });

  it("is not silent when something came between the checks: a slow watch catches up", () => {
    const silence = new WatchSilence(10);
    expect(silence.check(12)).toBe(false);
    silence.heard(11);
    expect(silence.check(12)).toBe(false);
  });

  it("is not silent when the bucket had nothing new at the first check", () => {
    const silence = new WatchSilence(10);
    expect(silence.check(10)).toBe(false);
    expect(silence.check(10)).toBe(false);
    // Written after that check: the next check is the first to see it, so it can only suspect the watch after one more.
    expect(silence.check(11)).toBe(false);
    expect(silence.check(11)).toBe(true);
  });

  it("counts the bucket's revisions up to the watch's start as seen", () => {
    const silence = new WatchSilence(500);
    expect(silence.check(500)).toBe(false);
    expect(silence.check(500)).toBe(false);
  });

  it("starts its checks again after the watch was made again", () => {
    const silence = new WatchSilence(10);
    silence.check(12);
    silence.restarted();
    expect(silence.check(12)).toBe(false);
    expect(silence.check(12)).toBe(true);
  });
});
