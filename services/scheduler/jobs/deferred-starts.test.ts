import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DeferredStarts, type PendingStart } from "./deferred-starts.js";

const DELAY_MS = 250;

describe("DeferredStarts", () => {
  let written: Array<[string, PendingStart]>;
  let starts: DeferredStarts;

  beforeEach(() => {
    vi.useFakeTimers();
    written = [];
    starts = new DeferredStarts(DELAY_MS, async (jobKey, start) => {
      written.push([jobKey, start]);
    });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it("writes a held start once its delay is over, at the time the node was given the attempt", () => {
    starts.defer("job-a", { attempt: 1, nodeId: "node-1", startedAtMs: 1000 });
    vi.advanceTimersByTime(DELAY_MS - 1);
    expect(written).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(written).toEqual([["job-a", { attempt: 1, nodeId: "node-1", startedAtMs: 1000 }]]);
    expect(starts.size).toBe(0);
  });

  it("keeps the first time when the same attempt is given again (a poll answer lost and asked again)", () => {
    starts.defer("job-a", { attempt: 1, nodeId: "node-1", startedAtMs: 1000 });
    vi.advanceTimersByTime(100);
    starts.defer("job-a", { attempt: 1, nodeId: "node-1", startedAtMs: 1100 });
    expect(starts.startedAt("job-a", 1, "node-1")).toBe(1000);
    vi.advanceTimersByTime(DELAY_MS);
    expect(written).toEqual([["job-a", { attempt: 1, nodeId: "node-1", startedAtMs: 1000 }]]);
  });

  it("writes nothing for an attempt whose end wrote its start (settled)", () => {
    starts.defer("job-a", { attempt: 1, nodeId: "node-1", startedAtMs: 1000 });
    starts.settle("job-a", 1);
    vi.advanceTimersByTime(DELAY_MS * 2);
    expect(written).toEqual([]);
    expect(starts.startedAt("job-a", 1, "node-1")).toBeUndefined();
  });

  it("names the held time only for the attempt and node it was given to", () => {
    starts.defer("job-a", { attempt: 2, nodeId: "node-1", startedAtMs: 1000 });
    expect(starts.startedAt("job-a", 1, "node-1")).toBeUndefined();
    expect(starts.startedAt("job-a", 2, "node-2")).toBeUndefined();
    starts.settle("job-a", 1);
    expect(starts.startedAt("job-a", 2, "node-1")).toBe(1000);
  });

  it("a later attempt of the job replaces an earlier one still held", () => {
    starts.defer("job-a", { attempt: 1, nodeId: "node-1", startedAtMs: 1000 });
    starts.defer("job-a", { attempt: 2, nodeId: "node-2", startedAtMs: 2000 });
    vi.advanceTimersByTime(DELAY_MS);
    expect(written).toEqual([["job-a", { attempt: 2, nodeId: "node-2", startedAtMs: 2000 }]]);
  });

  it("flush writes every held start at once and waits for the writes", async () => {
    const finished: string[] = [];
    starts = new DeferredStarts(DELAY_MS, async (jobKey) => {
      await Promise.resolve();
      finished.push(jobKey);
    });
    starts.defer("job-a", { attempt: 1, nodeId: "node-1", startedAtMs: 1000 });
    starts.defer("job-b", { attempt: 1, nodeId: "node-1", startedAtMs: 1001 });
    await starts.flush();
    expect(finished.sort()).toEqual(["job-a", "job-b"]);
    expect(starts.size).toBe(0);
    vi.advanceTimersByTime(DELAY_MS);
    expect(finished).toHaveLength(2);
  });
});
