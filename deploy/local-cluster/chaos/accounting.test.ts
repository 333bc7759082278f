import { describe, expect, it } from "vitest";
import type { JobEvent } from "../../../shared/contract/index.js";
import {
  account,
  type Debit,
  type Delivery,
  type FinalJob,
  passed,
  recoveryOf,
  type Submission,
} from "./accounting.js";

const T0 = Date.parse("2026-11-23T10:00:00.000Z");
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const event = (seconds: number, state: JobEvent["state"], attempt: number, reason: string): JobEvent => ({
  at: at(seconds),
  state,
  attempt,
  reason,
  node_id: attempt === 0 ? null : "nod_a",
});

/** A job that ran once and succeeded. */
function succeeded(jobId: string, startSeconds = 0): FinalJob {
  return {
    job_id: jobId,
    state: "succeeded",
    attempt: 1,
    pool_key: "op.local.default",
    finished_at: at(startSeconds + 3),
    timeline: [
      event(startSeconds, "queued", 0, "submitted"),
      event(startSeconds + 1, "assigned", 1, "assigned"),
      event(startSeconds + 2, "running", 1, "started"),
      event(startSeconds + 3, "succeeded", 1, "exited"),
    ],
  };
}

/** Its first node was lost while running; the second attempt succeeded. */
function requeued(jobId: string): FinalJob {
  return {
    job_id: jobId,
    state: "succeeded",
    attempt: 2,
    pool_key: "op.local.default",
    finished_at: at(9),
    timeline: [
      event(0, "queued", 0, "submitted"),
      event(1, "assigned", 1, "assigned"),
      event(2, "running", 1, "started"),
      event(5, "queued", 1, "node_lost"),
      event(6, "assigned", 2, "assigned"),
      event(7, "running", 2, "started"),
      event(9, "succeeded", 2, "exited"),
    ],
  };
}

const acked = (seq: number, jobId: string, sentSeconds = 0): Submission => ({
  seq,
  sentAtMs: T0 + sentSeconds * 1000,
  jobId,
  error: null,
});
const debit = (jobId: string, attempt = 1): Debit => ({ job_id: jobId, attempt });
const delivery = (jobId: string, attempt = 1): Delivery => ({ job_id: jobId, attempt });

describe("the soak's accounting", () => {
  it("passes jobs that ended once, each charged attempt with one debit", () => {
    const finals = new Map([
      ["job_a", succeeded("job_a")],
      ["job_b", requeued("job_b")],
    ]);
    const result = account(
      [acked(1, "job_a"), acked(2, "job_b")],
      finals,
      [debit("job_a"), debit("job_b", 2)],
      [delivery("job_a"), delivery("job_b"), delivery("job_b", 2)],
    );
    expect(result).toMatchObject({
      submitted: 2,
      acknowledged: 2,
      terminal: 2,
      byState: { succeeded: 2 },
      chargeable: 2,
      chargedOnce: 2,
    });
    expect(passed(result)).toBe(true);
  });

  it("counts refused submits by code, apart from the acknowledged", () => {
    const refused: Submission[] = [
      { seq: 1, sentAtMs: T0, jobId: null, error: "lb.http_502" },
      { seq: 2, sentAtMs: T0, jobId: null, error: "lb.http_502" },
      { seq: 3, sentAtMs: T0, jobId: null, error: "service.unavailable" },
    ];
    const result = account(refused, new Map(), [], []);
    expect(result).toMatchObject({
      submitted: 3,
      acknowledged: 0,
      refused: { "lb.http_502": 2, "service.unavailable": 1 },
    });
    expect(passed(result)).toBe(true);
  });

  it("calls an acknowledged job lost when the service does not know it or it has not ended", () => {
    const running = {
      ...succeeded("job_b"),
      state: "running" as const,
      finished_at: null,
      timeline: succeeded("job_b").timeline.slice(0, 3),
    };
    const result = account(
      [acked(1, "job_a"), acked(2, "job_b")],
      new Map<string, FinalJob | null>([
        ["job_a", null],
        ["job_b", running],
      ]),
      [],
      [],
    );
    expect(result.lost).toEqual([
      { job_id: "job_a", why: "unknown to the service" },
      { job_id: "job_b", why: "still running at the end" },
    ]);
    expect(passed(result)).toBe(false);
  });

  it("calls a job doubled when one attempt started twice", () => {
    const job = succeeded("job_a");
    const twice = {
      ...job,
      timeline: [...job.timeline.slice(0, 3), event(2.5, "running", 1, "started"), job.timeline[3]!],
    };
    const result = account([acked(1, "job_a")], new Map([["job_a", twice]]), [debit("job_a")], []);
    expect(result.doubled).toEqual([{ job_id: "job_a", why: "attempt 1 started 2 times" }]);
    expect(passed(result)).toBe(false);
  });

  it("calls a job doubled when agents received the same attempt twice", () => {
    const result = account(
      [acked(1, "job_a")],
      new Map([["job_a", succeeded("job_a")]]),
      [debit("job_a")],
      [delivery("job_a"), delivery("job_a")],
    );
    expect(result.doubled).toEqual([{ job_id: "job_a", why: "attempt 1 was delivered to agents 2 times" }]);
  });

  it("does not call a requeue after a lost node doubled: each attempt ran once", () => {
    const result = account(
      [acked(1, "job_b")],
      new Map([["job_b", requeued("job_b")]]),
      [debit("job_b", 2)],
      [delivery("job_b"), delivery("job_b", 2)],
    );
    expect(result.doubled).toEqual([]);
  });

  it("calls a job doubled when it succeeded twice", () => {
    const job = succeeded("job_a");
    const twice = { ...job, timeline: [...job.timeline, event(4, "succeeded", 1, "exited")] };
    const result = account([acked(1, "job_a")], new Map([["job_a", twice]]), [debit("job_a")], []);
    expect(result.doubled).toEqual([{ job_id: "job_a", why: "succeeded 2 times" }]);
  });

  it("flags a charged attempt without a debit as uncharged", () => {
    const result = account([acked(1, "job_a")], new Map([["job_a", succeeded("job_a")]]), [], []);
    expect(result).toMatchObject({
      chargeable: 1,
      chargedOnce: 0,
      uncharged: [{ job_id: "job_a", why: "attempt 1 has no debit" }],
    });
    expect(passed(result)).toBe(false);
  });

  it("flags two debits for one attempt, and a debit for an attempt whose node was lost, as overcharged", () => {
    const finals = new Map([
      ["job_a", succeeded("job_a")],
      ["job_b", requeued("job_b")],
    ]);
    const result = account(
      [acked(1, "job_a"), acked(2, "job_b")],
      finals,
      [debit("job_a"), debit("job_a"), debit("job_b", 1), debit("job_b", 2)],
      [],
    );
    expect(result.overcharged).toEqual([
      { job_id: "job_a", why: "attempt 1 has 2 debits" },
      { job_id: "job_b", why: "attempt 1 must be free but has 1 debit" },
    ]);
    expect(result.chargedOnce).toBe(1);
    expect(passed(result)).toBe(false);
  });
});

describe("a fault's recovery", () => {
  const fault = {
    target: "scheduler-1",
    killedAtMs: T0 + 10_000,
    restartedAtMs: T0 + 13_000,
    readyAtMs: T0 + 16_000,
    error: null,
  };

  it("runs from the kill to the later of the restarted process ready and the first success of a job sent after the kill", () => {
    const finals = new Map([
      ["job_before", succeeded("job_before", 9)],
      ["job_after", succeeded("job_after", 15)],
    ]);
    const recovery = recoveryOf(fault, [acked(1, "job_before", 9), acked(2, "job_after", 11)], finals);
    // job_before finished after the kill but was sent before it: it does not count.
    expect(recovery).toEqual({ target: "scheduler-1", readyMs: 6_000, firstSuccessMs: 8_000, recoveryMs: 8_000 });
  });

  it("has no recovery time when no job sent after the kill succeeded", () => {
    const recovery = recoveryOf(
      fault,
      [acked(1, "job_before", 9)],
      new Map([["job_before", succeeded("job_before", 9)]]),
    );
    expect(recovery).toMatchObject({ readyMs: 6_000, firstSuccessMs: null, recoveryMs: null });
  });
});
