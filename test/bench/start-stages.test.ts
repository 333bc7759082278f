import { describe, expect, it } from "vitest";
import { startStages, summariseStages, type StartStages } from "./start-stages.js";

const T0 = Date.parse("2026-11-28T10:00:00.000Z");
const iso = (ms: number) => new Date(T0 + ms).toISOString();

function job(queued: number, assigned: number | undefined, started: number | null) {
  return {
    queued_at: iso(queued),
    started_at: started === null ? null : iso(started),
    timeline: [
      { at: iso(queued), state: "queued" as const, attempt: 0, reason: "submitted", node_id: null },
      ...(assigned === undefined
        ? []
        : [{ at: iso(assigned), state: "assigned" as const, attempt: 1, reason: "assigned", node_id: "n" }]),
    ],
  };
}

describe("a job's start stages", () => {
  it("split submit → start at queued_at, the assigned event and started_at, and add up to the total", () => {
    const stages = startStages(job(3, 5, 9), T0 + 1, T0 + 12, T0);
    expect(stages).toEqual({
      submitToQueued: 2,
      queuedToAssigned: 2,
      assignedToStarted: 4,
      startedToReceived: 3,
      total: 11,
      dueInStep: 1,
    });
  });

  it("are unknown for a job not started or without an assigned event", () => {
    expect(startStages(job(3, 5, null), T0, T0 + 12, T0)).toBeUndefined();
    expect(startStages(job(3, undefined, 9), T0, T0 + 12, T0)).toBeUndefined();
  });
});

describe("the stages' summary", () => {
  const one = (total: number, queuedToAssigned: number): StartStages => ({
    submitToQueued: 1,
    queuedToAssigned,
    assignedToStarted: 1,
    startedToReceived: 1,
    total,
    dueInStep: total,
  });

  it("gives each stage's median, and its mean over the slowest jobs by total", () => {
    const jobs = [one(5, 2), one(6, 3), one(50, 40), one(7, 4), one(40, 30)];
    const summary = summariseStages(jobs, 2)!;
    expect(summary.stages.queuedToAssigned).toEqual({ p50: 4, slowestMean: 35 });
    expect(summary.stages.submitToQueued).toEqual({ p50: 1, slowestMean: 1 });
    expect(summary.slowest).toEqual([
      { total: 50, dueInStep: 50 },
      { total: 40, dueInStep: 40 },
    ]);
  });

  it("takes the slowest 1 % (at least one job) unless told how many, and nothing of no jobs", () => {
    const jobs = Array.from({ length: 250 }, (_, index) => one(index, index));
    expect(summariseStages(jobs)!.slowest.map((job) => job.total)).toEqual([249, 248, 247]);
    expect(summariseStages([one(5, 1)])!.slowest).toHaveLength(1);
    expect(summariseStages([])).toBeUndefined();
  });
});
