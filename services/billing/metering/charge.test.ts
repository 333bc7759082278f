import { describe, expect, it } from "vitest";
import type { JobEvent } from "../../../shared/contract/index.js";
import { attemptEnd, chargedAttempts, chargeMicros, type JobView } from "./charge.js";

const RATES = { cpu_core_hour: 1, memory_gb_hour: 0.1, gpu_hour: 20 };
const HOUR_MS = 3_600_000;

function event(at: string, state: JobEvent["state"], attempt: number, reason: string): JobEvent {
  return { at: `2026-11-22T10:${at}.000Z`, state, attempt, reason, node_id: state === "queued" ? null : "nod_1" };
}

function job(timeline: JobEvent[], overrides: Partial<JobView> = {}): JobView {
  const last = timeline[timeline.length - 1] as JobEvent;
  return { pool_key: "op.default", state: last.state, attempt: last.attempt, timeline, ...overrides };
}

describe("chargeMicros", () => {
  it("charges wall hours × (cores × core rate + GB × GB rate + GPUs × GPU rate)", () => {
    expect(chargeMicros(HOUR_MS, { cpu: 1, memory_mb: 1024, gpu: 0 }, RATES)).toBe(1_100_000);
    expect(chargeMicros(HOUR_MS / 2, { cpu: 2, memory_mb: 2048, gpu: 1 }, RATES)).toBe(11_100_000);
  });

  it("rounds to the nearest micro-credit and charges nothing for no time", () => {
    expect(chargeMicros(1, { cpu: 1, memory_mb: 512, gpu: 0 }, RATES)).toBe(0);
    // 1 s of one core at 1 credit per hour: 277.77… micro-credits.
    expect(chargeMicros(1000, { cpu: 1, memory_mb: 0.0001, gpu: 0 }, RATES)).toBe(278);
    expect(chargeMicros(0, { cpu: 64, memory_mb: 65_536, gpu: 8 }, RATES)).toBe(0);
  });

  it("charges fractions of a core", () => {
    expect(
      chargeMicros(
        HOUR_MS,
        { cpu: 0.5, memory_mb: 512, gpu: 0 },
        { cpu_core_hour: 0.8, memory_gb_hour: 0.08, gpu_hour: 16 },
      ),
    ).toBe(440_000);
  });
});

describe("attemptEnd", () => {
  const started = [
    event("00:00", "queued", 0, "submitted"),
    event("00:01", "assigned", 1, "assigned"),
    event("00:02", "running", 1, "started"),
  ];

  it("is open while the attempt is assigned or running", () => {
    expect(attemptEnd(job(started), 1)).toEqual({ status: "open" });
    expect(attemptEnd(job(started.slice(0, 2)), 1)).toEqual({ status: "open" });
  });

  it("charges a result from the start to the end event", () => {
    for (const state of ["succeeded", "failed"] as const) {
      expect(attemptEnd(job([...started, event("01:32", state, 1, "exited")]), 1)).toEqual({
        status: "charged",
        outcome: state,
        started_at: "2026-11-22T10:00:02.000Z",
        ended_at: "2026-11-22T10:01:32.000Z",
        wall_ms: 90_000,
      });
    }
  });

  it("charges a timeout and a cancel after the start", () => {
    expect(attemptEnd(job([...started, event("00:12", "timed_out", 1, "timed_out")]), 1)).toMatchObject({
      status: "charged",
      wall_ms: 10_000,
    });
    expect(attemptEnd(job([...started, event("00:07", "cancelled", 1, "cancelled")]), 1)).toMatchObject({
      status: "charged",
      outcome: "cancelled",
      wall_ms: 5_000,
    });
  });

  it("does not charge a cancel before the start, a lost node, or a self-hosted pool", () => {
    expect(attemptEnd(job([...started.slice(0, 2), event("00:05", "cancelled", 1, "cancelled")]), 1)).toEqual({
      status: "free",
      why: "never_started",
    });
    expect(attemptEnd(job([...started, event("00:09", "queued", 1, "node_lost")]), 1)).toEqual({
      status: "free",
      why: "node_lost",
    });
    expect(attemptEnd(job([...started, event("00:09", "failed", 1, "node_lost")]), 1)).toEqual({
      status: "free",
      why: "node_lost",
    });
    expect(
      attemptEnd(job([...started, event("00:09", "succeeded", 1, "exited")], { pool_key: "sh.biz_1.mine" }), 1),
    ).toEqual({ status: "free", why: "self_hosted" });
  });

  it("tells one attempt from the next: a lost first attempt is free, the second one is charged", () => {
    const timeline = [
      ...started,
      event("00:09", "queued", 1, "node_lost"),
      event("00:10", "assigned", 2, "assigned"),
      event("00:11", "running", 2, "started"),
      event("00:41", "succeeded", 2, "exited"),
    ];
    expect(attemptEnd(job(timeline), 1)).toEqual({ status: "free", why: "node_lost" });
    expect(attemptEnd(job(timeline), 2)).toMatchObject({ status: "charged", wall_ms: 30_000 });
  });

  it("charges a retried job's earlier attempt once the record moved on", () => {
    const timeline = [
      ...started,
      event("00:22", "failed", 1, "exited"),
      event("00:30", "queued", 1, "retried"),
      event("00:31", "assigned", 2, "assigned"),
    ];
    expect(attemptEnd(job(timeline), 1)).toMatchObject({ status: "charged", outcome: "failed", wall_ms: 20_000 });
  });

  it("is unknown when the timeline holds no trace of the attempt", () => {
    expect(
      attemptEnd(job([event("00:00", "queued", 0, "submitted"), event("00:31", "succeeded", 7, "exited")]), 3),
    ).toEqual({ status: "unknown" });
  });
});

describe("chargedAttempts", () => {
  const started = [
    event("00:00", "queued", 0, "submitted"),
    event("00:01", "assigned", 1, "assigned"),
    event("00:02", "running", 1, "started"),
  ];

  it("lists every attempt that ended charged, and none that is open or free", () => {
    const timeline = [
      ...started,
      event("00:22", "failed", 1, "exited"),
      event("00:30", "queued", 1, "retried"),
      event("00:31", "assigned", 2, "assigned"),
      event("00:32", "running", 2, "started"),
      event("00:40", "queued", 2, "node_lost"),
      event("00:41", "assigned", 3, "assigned"),
      event("00:42", "running", 3, "started"),
    ];
    expect(chargedAttempts(job(timeline))).toEqual([
      { attempt: 1, end: expect.objectContaining({ status: "charged", wall_ms: 20_000 }) },
    ]);
    expect(
      chargedAttempts(job([...timeline, event("00:52", "succeeded", 3, "exited")])).map(({ attempt }) => attempt),
    ).toEqual([1, 3]);
  });

  it("lists nothing for a self-hosted pool or a cancel before the start", () => {
    expect(
      chargedAttempts(job([...started, event("00:09", "succeeded", 1, "exited")], { pool_key: "sh.biz_1.mine" })),
    ).toEqual([]);
    expect(chargedAttempts(job([...started.slice(0, 2), event("00:05", "cancelled", 1, "cancelled")]))).toEqual([]);
  });
});
