import { describe, expect, it } from "vitest";
import type { JobEvent } from "../../../shared/contract/index.js";
import { duration } from "./format.js";
import { attemptsOf, queuedForMs, ranForMs, segmentsOf } from "./job-times.js";

const T0 = Date.parse("2026-11-20T10:00:00.000Z");
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const event = (seconds: number, state: JobEvent["state"], attempt: number, reason: string, extra = {}): JobEvent => ({
  at: at(seconds),
  state,
  attempt,
  reason,
  node_id: attempt > 0 ? `nod_${attempt}` : null,
  ...extra,
});

describe("queuedForMs and ranForMs", () => {
  it("count a waiting job's wait up to now, and nothing of a run", () => {
    const job = { queued_at: at(0), started_at: null, finished_at: null };
    expect(queuedForMs(job, T0 + 42_000)).toBe(42_000);
    expect(ranForMs(job, T0 + 42_000)).toBeNull();
  });

  it("count a running job's run up to now, so it grows while the page's clock ticks", () => {
    const job = { queued_at: at(0), started_at: at(5), finished_at: null };
    expect(queuedForMs(job, T0 + 60_000)).toBe(5000);
    expect(ranForMs(job, T0 + 60_000)).toBe(55_000);
    expect(ranForMs(job, T0 + 61_000)).toBe(56_000);
  });

  it("stop at the end of a finished job, and at zero when the browser's clock trails the service's", () => {
    expect(ranForMs({ queued_at: at(0), started_at: at(5), finished_at: at(255) }, T0 + 999_000)).toBe(250_000);
    expect(queuedForMs({ queued_at: at(0), started_at: null, finished_at: at(30) }, T0 + 999_000)).toBe(30_000);
    expect(ranForMs({ queued_at: at(0), started_at: at(5), finished_at: null }, T0)).toBe(0);
  });
});

describe("attemptsOf", () => {
  it("reads each attempt's node, start, end and result from the timeline", () => {
    const failed = { exit_code: 3, error: { code: "job.exit_nonzero", message: "exit 3" } };
    const attempts = attemptsOf([
      event(0, "queued", 0, "submitted"),
      event(1, "assigned", 1, "assigned"),
      event(2, "running", 1, "started"),
      event(60, "failed", 1, "exited", failed),
      event(61, "queued", 1, "retry_scheduled", failed),
      event(90, "queued", 1, "released"),
      event(91, "assigned", 2, "assigned"),
      event(92, "running", 2, "started"),
      event(100, "queued", 2, "node_lost", { error: { code: "node.lost", message: "lost" } }),
      event(101, "assigned", 3, "assigned"),
      event(102, "running", 3, "started"),
    ]);
    expect(attempts).toEqual([
      {
        attempt: 1,
        node_id: "nod_1",
        assigned_at: at(1),
        started_at: at(2),
        ended_at: at(60),
        outcome: "failed",
        reason: "exited",
        ...failed,
      },
      {
        attempt: 2,
        node_id: "nod_2",
        assigned_at: at(91),
        started_at: at(92),
        ended_at: at(100),
        outcome: "queued",
        reason: "node_lost",
        exit_code: null,
        error: { code: "node.lost", message: "lost" },
      },
      {
        attempt: 3,
        node_id: "nod_3",
        assigned_at: at(101),
        started_at: at(102),
        ended_at: null,
        outcome: null,
        reason: null,
        exit_code: null,
        error: null,
      },
    ]);
  });

  it("has no attempt for a job cancelled before any node took it", () => {
    expect(attemptsOf([event(0, "queued", 0, "submitted"), event(5, "cancelled", 0, "cancelled")])).toEqual([]);
  });
});

describe("segmentsOf", () => {
  it("gives each state its time until the next change, the open one until now, and the end none", () => {
    const timeline = [
      event(0, "queued", 0, "submitted"),
      event(3, "assigned", 1, "assigned"),
      event(4, "running", 1, "started"),
    ];
    expect(segmentsOf(timeline, T0 + 10_000).map((segment) => [segment.state, segment.ms])).toEqual([
      ["queued", 3000],
      ["assigned", 1000],
      ["running", 6000],
    ]);
    const ended = [...timeline, event(250, "failed", 1, "exited")];
    expect(segmentsOf(ended, T0 + 999_000).map((segment) => [segment.state, segment.ms])).toEqual([
      ["queued", 3000],
      ["assigned", 1000],
      ["running", 246_000],
      ["failed", 0],
    ]);
  });
});

describe("duration", () => {
  it("says a length of time in the largest two units", () => {
    expect([850, 42_000, 250_000, 240_000, 7_500_000, 3 * 86_400_000 + 4 * 3_600_000].map(duration)).toEqual([
      "850 ms",
      "42 s",
      "4 min 10 s",
      "4 min",
      "2 h 5 min",
      "3 d 4 h",
    ]);
  });
});
