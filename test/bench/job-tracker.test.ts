import { describe, expect, it } from "vitest";
import { JobTracker } from "./job-tracker.js";

describe("bench job tracker", () => {
  it("joins events by job id whatever their order, and counts only jobs submitted in its run", () => {
    const tracker = new JobTracker();
    tracker.started("a", 15);
    tracker.completed("a", 16);
    tracker.completed("stray", 17);
    expect(tracker.completedCount).toBe(0);
    tracker.submitted("a", 10);
    tracker.submitted("b", 11);
    tracker.started("b", 20);
    tracker.started("b", 99);
    tracker.completed("b", 21);
    expect(tracker.completedCount).toBe(2);
    expect(tracker.lastCompletedAtMs).toBe(21);
    expect(tracker.submitToStartMs().sort()).toEqual([5, 9]);
    expect(tracker.startedBy(15)).toBe(1);
  });

  it("waitForCompleted resolves true once the count is reached and false on abort", async () => {
    const tracker = new JobTracker();
    tracker.submitted("a", 0);
    const reached = tracker.waitForCompleted(1, 60_000, new AbortController().signal);
    tracker.completed("a", 1);
    expect(await reached).toBe(true);
    const stop = new AbortController();
    const aborted = tracker.waitForCompleted(2, 60_000, stop.signal);
    stop.abort();
    expect(await aborted).toBe(false);
  });
});
