import { describe, expect, it } from "vitest";
import { queuedJobRecord } from "../../../test/harness/job-records.js";
import { JobState, type JobEvent } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { encodeJson } from "../../../shared/nats/index.js";
import { JobRecord, mayBeQueued } from "../../../shared/records/index.js";
import {
  assign,
  cancel,
  expireInQueue,
  finish,
  finishGiven,
  nodeLost,
  requeueUnreserved,
  retry,
  start,
  timeOut,
  type RunResult,
} from "./transitions.js";

const CREATED = Date.parse("2026-03-01T00:00:00.000Z");
const NOW = Date.parse("2026-03-01T00:10:00.000Z");
const NOW_ISO = new Date(NOW).toISOString();
const NODE = "nod_AAAAAAAAAAAAAAAAAAAA";
const OTHER_NODE = "nod_BBBBBBBBBBBBBBBBBBBB";
const ALL_STATES = JobState.options;

/**
 * A valid job record in `state`. A state past `queued` comes with what that state carries:
 * an attempt on NODE, a start and deadline when running, an end when terminal.
 */
function jobIn(state: JobState, overrides: Partial<JobRecord> = {}): JobRecord {
  const at = (offsetSeconds: number) => new Date(CREATED + offsetSeconds * 1000).toISOString();
  const placed = state !== "queued";
  const started = state === "running" || state === "succeeded" || state === "failed" || state === "timed_out";
  const terminal = state === "succeeded" || state === "failed" || state === "timed_out" || state === "cancelled";
  const error =
    state === "failed"
      ? { code: "job.exit_nonzero", message: "exit 1" }
      : state === "timed_out"
        ? { code: "job.timed_out", message: "too long" }
        : state === "cancelled"
          ? { code: "job.cancelled", message: "Cancelled by a user." }
          : null;
  const timeline: JobEvent[] = [{ at: at(0), state: "queued", attempt: 0, reason: "submitted", node_id: null }];
  if (placed) timeline.push({ at: at(1), state: "assigned", attempt: 1, reason: "assigned", node_id: NODE });
  if (started) timeline.push({ at: at(2), state: "running", attempt: 1, reason: "started", node_id: NODE });
  if (terminal) timeline.push({ at: at(3), state, attempt: 1, reason: state, node_id: NODE });
  return JobRecord.parse(
    queuedJobRecord({
      command: ["echo", "hi"],
      state,
      attempt: placed ? 1 : 0,
      node_id: placed ? NODE : null,
      exit_code: state === "succeeded" ? 0 : state === "failed" ? 1 : null,
      error,
      pending_reason: placed ? null : "waiting_for_scheduler",
      created_at: at(0),
      queued_at: at(0),
      started_at: started ? at(2) : null,
      finished_at: terminal ? at(3) : null,
      updated_at: at(terminal ? 3 : started ? 2 : placed ? 1 : 0),
      deadline_at: state === "running" ? at(62) : null,
      timeline,
      ...overrides,
    }),
  );
}

/** The error a call throws, which must be an AppError. */
function thrown(call: () => unknown): AppError {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error("expected the transition to throw");
}

function lastEvent(job: JobRecord): JobEvent {
  const event = job.timeline.at(-1);
  if (!event) throw new Error("empty timeline");
  return event;
}

/** Every transition that changes the state, applied to a job in its usual source state. */
const STATE_CHANGES: Array<{
  name: string;
  from: JobState;
  overrides?: Partial<JobRecord>;
  apply: (job: JobRecord) => JobRecord;
  to: JobState;
}> = [
  { name: "assign", from: "queued", apply: (job) => assign(job, NODE, NOW), to: "assigned" },
  { name: "start", from: "assigned", apply: (job) => start(job, 1, NODE, NOW), to: "running" },
  {
    name: "finish (succeeded)",
    from: "running",
    apply: (job) => finish(job, 1, NODE, { outcome: "succeeded", exit_code: 0 }, NOW),
    to: "succeeded",
  },
  {
    name: "finish (failed)",
    from: "running",
    apply: (job) => finish(job, 1, NODE, { outcome: "failed", exit_code: 2 }, NOW),
    to: "failed",
  },
  { name: "cancel", from: "running", apply: (job) => cancel(job, NOW), to: "cancelled" },
  { name: "retry", from: "failed", apply: (job) => retry(job, NOW), to: "queued" },
  { name: "timeOut", from: "running", apply: (job) => timeOut(job, NOW), to: "timed_out" },
  { name: "nodeLost (requeue)", from: "running", apply: (job) => nodeLost(job, NOW), to: "queued" },
  {
    name: "nodeLost (spent)",
    from: "running",
    overrides: { max_attempts: 1 },
    apply: (job) => nodeLost(job, NOW),
    to: "failed",
  },
];

/** Each transition's allowed source states; every other state must be refused with `details.state`. */
const SOURCE_STATES: Array<{
  name: string;
  allowed: JobState[];
  code: "state.conflict" | "job.stale_attempt";
  apply: (job: JobRecord) => JobRecord;
}> = [
  { name: "assign", allowed: ["queued"], code: "state.conflict", apply: (job) => assign(job, NODE, NOW) },
  // A node's start or result for an attempt that is not live any more is a stale attempt, whatever the state.
  {
    name: "start",
    allowed: ["assigned"],
    code: "job.stale_attempt",
    apply: (job) => start(job, job.attempt, NODE, NOW),
  },
  {
    name: "finish",
    allowed: ["assigned", "running"],
    code: "job.stale_attempt",
    apply: (job) => finish(job, job.attempt, NODE, { outcome: "succeeded", exit_code: 0 }, NOW),
  },
  {
    name: "cancel",
    allowed: ["queued", "assigned", "running"],
    code: "state.conflict",
    apply: (job) => cancel(job, NOW),
  },
  { name: "retry", allowed: ["failed", "timed_out"], code: "state.conflict", apply: (job) => retry(job, NOW) },
  { name: "timeOut", allowed: ["running"], code: "state.conflict", apply: (job) => timeOut(job, NOW) },
  { name: "nodeLost", allowed: ["assigned", "running"], code: "state.conflict", apply: (job) => nodeLost(job, NOW) },
];

describe("source states", () => {
  const cases = SOURCE_STATES.flatMap(({ name, allowed, code, apply }) =>
    ALL_STATES.map((state) => ({ name, state, allowed: allowed.includes(state), code, apply })),
  );

  it.each(cases.filter((each) => each.allowed))("$name from $state succeeds", ({ state, apply }) => {
    const before = jobIn(state);
    const after = apply(before);
    expect(after.updated_at).toBe(NOW_ISO);
  });

  it.each(cases.filter((each) => !each.allowed))(
    "$name from $state is refused with $code and the state, changing nothing",
    ({ state, code, apply }) => {
      const before = jobIn(state);
      const copy = structuredClone(before);
      const error = thrown(() => apply(before));
      expect(error.code).toBe(code);
      expect(error.httpStatus).toBe(409);
      expect(error.details).toMatchObject({ state, job_id: before.job_id });
      expect(before).toEqual(copy);
    },
  );
});

describe("timeline", () => {
  it.each(STATE_CHANGES)(
    "$name appends exactly one event with the new state, attempt and node, and leaves its input as it was",
    ({ from, overrides, apply, to }) => {
      const before = jobIn(from, overrides);
      const copy = structuredClone(before);
      const after = apply(before);
      expect(after.state).toBe(to);
      expect(after.timeline).toHaveLength(before.timeline.length + 1);
      expect(after.timeline.slice(0, -1)).toEqual(before.timeline);
      expect(lastEvent(after)).toMatchObject({
        at: NOW_ISO,
        state: to,
        attempt: after.attempt,
        node_id: after.node_id,
      });
      expect(before).toEqual(copy);
    },
  );

  it("a long history keeps its first event and the most recent ones, at most 200", () => {
    const history: JobEvent[] = Array.from({ length: 200 }, (_, index) => ({
      at: new Date(CREATED + index * 1000).toISOString(),
      state: index % 2 === 0 ? "queued" : "assigned",
      attempt: Math.ceil(index / 2),
      reason: index === 0 ? "submitted" : index % 2 === 0 ? "node_lost" : "assigned",
      node_id: index % 2 === 0 ? null : NODE,
    }));
    const after = assign(jobIn("queued", { attempt: 99, max_attempts: 200, timeline: history }), NODE, NOW);
    expect(after.timeline).toHaveLength(200);
    expect(after.timeline[0]).toEqual(history[0]);
    expect(after.timeline[1]).toEqual(history[2]);
    expect(lastEvent(after)).toMatchObject({ state: "assigned", attempt: 100, at: NOW_ISO });
  });
});

describe("attempt", () => {
  it.each(STATE_CHANGES)("is kept by $name unless it assigns", ({ name, from, overrides, apply }) => {
    const before = jobIn(from, overrides);
    expect(apply(before).attempt).toBe(name === "assign" ? before.attempt + 1 : before.attempt);
  });
});

describe("assign", () => {
  it("gives the job to the node as the next attempt and clears why it waited", () => {
    const after = assign(jobIn("queued", { attempt: 2, pending_reason: "all_nodes_busy" }), NODE, NOW);
    expect(after).toMatchObject({
      state: "assigned",
      attempt: 3,
      node_id: NODE,
      pending_reason: null,
      started_at: null,
    });
    expect(lastEvent(after)).toMatchObject({ reason: "assigned", attempt: 3, node_id: NODE });
  });
});

describe("start", () => {
  it("starts the clock: started_at now and the deadline timeout_seconds later", () => {
    const after = start(jobIn("assigned", { timeout_seconds: 90 }), 1, NODE, NOW);
    expect(after).toMatchObject({
      state: "running",
      attempt: 1,
      node_id: NODE,
      started_at: NOW_ISO,
      deadline_at: new Date(NOW + 90_000).toISOString(),
    });
    expect(lastEvent(after).reason).toBe("started");
  });

  it.each([
    { what: "an older attempt", attempt: 0, node: NODE },
    { what: "a newer attempt", attempt: 2, node: NODE },
    { what: "another node", attempt: 1, node: OTHER_NODE },
  ])("of $what is a stale attempt that changes nothing", ({ attempt, node }) => {
    const before = jobIn("assigned");
    const error = thrown(() => start(before, attempt, node, NOW));
    expect(error.code).toBe("job.stale_attempt");
    expect(error.details).toMatchObject({ job_id: before.job_id, attempt, current_attempt: 1, state: "assigned" });
  });
});

describe("finish", () => {
  it("records a success: exit code, usage, no error, finished now", () => {
    const usage = { wall_seconds: 3, cpu_seconds: 2.5, peak_memory_mb: 100 };
    const before = jobIn("running");
    const after = finish(before, 1, NODE, { outcome: "succeeded", exit_code: 0, usage }, NOW);
    expect(after).toMatchObject({
      state: "succeeded",
      exit_code: 0,
      error: null,
      usage,
      finished_at: NOW_ISO,
      deadline_at: null,
      started_at: before.started_at,
    });
    expect(lastEvent(after)).toMatchObject({ state: "succeeded", reason: "exited", exit_code: 0, error: null });
  });

  it("records a failure with `job.exit_nonzero` when the node names no error", () => {
    const after = finish(jobIn("running"), 1, NODE, { outcome: "failed", exit_code: 7 }, NOW);
    expect(after).toMatchObject({
      state: "failed",
      exit_code: 7,
      error: { code: "job.exit_nonzero" },
      usage: null,
      finished_at: NOW_ISO,
      deadline_at: null,
    });
    expect(after.error?.message).toContain("7");
    expect(lastEvent(after)).toMatchObject({
      state: "failed",
      reason: "exited",
      exit_code: 7,
      error: { code: "job.exit_nonzero" },
    });
  });

  it("keeps the error the node reports", () => {
    const result: RunResult = {
      outcome: "failed",
      exit_code: null,
      error: { code: "agent.spawn_failed", message: "no such file" },
    };
    const after = finish(jobIn("running"), 1, NODE, result, NOW);
    expect(after).toMatchObject({ state: "failed", exit_code: null, error: result.error });
    expect(lastEvent(after)).toMatchObject({ reason: "failed", error: result.error });
  });

  it("accepts a result of an attempt that was never started, which then starts and ends now", () => {
    const after = finish(jobIn("assigned"), 1, NODE, { outcome: "succeeded", exit_code: 0 }, NOW);
    expect(after).toMatchObject({ state: "succeeded", started_at: NOW_ISO, finished_at: NOW_ISO });
  });

  it.each([
    { what: "an older attempt", attempt: 0, node: NODE },
    { what: "a newer attempt", attempt: 2, node: NODE },
    { what: "another node", attempt: 1, node: OTHER_NODE },
  ])("of $what is a stale attempt that changes nothing", ({ attempt, node }) => {
    const before = jobIn("running");
    const copy = structuredClone(before);
    const error = thrown(() => finish(before, attempt, node, { outcome: "succeeded", exit_code: 0 }, NOW));
    expect(error.code).toBe("job.stale_attempt");
    expect(error.details).toMatchObject({ job_id: before.job_id, attempt, current_attempt: 1, state: "running" });
    expect(before).toEqual(copy);
  });
});

describe("finishGiven (decision 0095)", () => {
  const GIVEN = NOW - 40;

  it("starts an attempt whose start was held at the time it was given, then ends it, in one change", () => {
    const before = jobIn("assigned");
    const after = finishGiven(before, 1, NODE, { outcome: "succeeded", exit_code: 0 }, GIVEN, NOW);
    expect(after).toMatchObject({
      state: "succeeded",
      started_at: new Date(GIVEN).toISOString(),
      finished_at: NOW_ISO,
      deadline_at: null,
    });
    expect(after.timeline.slice(before.timeline.length).map(({ state, reason, at }) => [state, reason, at])).toEqual([
      ["running", "started", new Date(GIVEN).toISOString()],
      ["succeeded", "exited", NOW_ISO],
    ]);
  });

  it("ends a running attempt as finish does, its start kept", () => {
    const before = jobIn("running");
    const result: RunResult = { outcome: "failed", exit_code: 2 };
    expect(finishGiven(before, 1, NODE, result, GIVEN, NOW)).toEqual(finish(before, 1, NODE, result, NOW));
  });

  it("refuses another node's result for a given attempt as stale, changing nothing", () => {
    const before = jobIn("assigned");
    const error = thrown(() => finishGiven(before, 1, OTHER_NODE, { outcome: "succeeded", exit_code: 0 }, GIVEN, NOW));
    expect(error.code).toBe("job.stale_attempt");
  });
});

describe("cancel", () => {
  it.each(["queued", "assigned", "running"] as const)(
    "ends a %s job as cancelled, keeping its attempt and node",
    (state) => {
      const before = jobIn(state);
      const after = cancel(before, NOW);
      expect(after).toMatchObject({
        state: "cancelled",
        attempt: before.attempt,
        node_id: before.node_id,
        error: { code: "job.cancelled" },
        finished_at: NOW_ISO,
        deadline_at: null,
        pending_reason: null,
      });
      expect(lastEvent(after)).toMatchObject({ reason: "cancelled", error: { code: "job.cancelled" } });
    },
  );
});

describe("retry", () => {
  it.each(["failed", "timed_out"] as const)(
    "requeues a %s job under the same attempt count, clearing the last run",
    (state) => {
      const before = jobIn(state, { usage: { wall_seconds: 1 } });
      const after = retry(before, NOW);
      expect(after).toMatchObject({
        state: "queued",
        attempt: 1,
        node_id: null,
        exit_code: null,
        error: null,
        usage: null,
        started_at: null,
        finished_at: null,
        deadline_at: null,
        queued_at: NOW_ISO,
        pending_reason: "waiting_for_scheduler",
        created_at: before.created_at,
        max_attempts: before.max_attempts,
        attempt_base: 1,
      });
      expect(lastEvent(after)).toMatchObject({ state: "queued", reason: "retried", node_id: null, attempt: 1 });
    },
  );

  it("grants a fresh budget of max_attempts: automatic requeues count from the attempt it was retried at", () => {
    const retried = retry(jobIn("failed", { attempt: 3, max_attempts: 3 }), NOW);
    expect(retried).toMatchObject({ attempt: 3, attempt_base: 3, max_attempts: 3 });
    const onAttempt = (attempt: number) =>
      jobIn("running", { attempt, max_attempts: 3, attempt_base: retried.attempt_base });
    expect(nodeLost(onAttempt(4), NOW).state).toBe("queued");
    expect(nodeLost(onAttempt(5), NOW).state).toBe("queued");
    expect(nodeLost(onAttempt(6), NOW)).toMatchObject({ state: "failed", error: { code: "node.lost" } });
  });
});

describe("timeOut", () => {
  it("ends a running job as timed_out with `job.timed_out`", () => {
    const before = jobIn("running");
    const after = timeOut(before, NOW);
    expect(after).toMatchObject({
      state: "timed_out",
      attempt: 1,
      node_id: NODE,
      error: { code: "job.timed_out" },
      finished_at: NOW_ISO,
      deadline_at: null,
      exit_code: null,
    });
    expect(lastEvent(after)).toMatchObject({ reason: "timed_out", error: { code: "job.timed_out" } });
  });
});

describe("nodeLost", () => {
  it.each(["assigned", "running"] as const)(
    "requeues a %s job while attempts remain, recording `node.lost` on the event",
    (state) => {
      const before = jobIn(state, { max_attempts: 2 });
      const after = nodeLost(before, NOW);
      expect(after).toMatchObject({
        state: "queued",
        attempt: 1,
        node_id: null,
        started_at: null,
        deadline_at: null,
        finished_at: null,
        error: null,
        queued_at: NOW_ISO,
        pending_reason: "waiting_for_scheduler",
      });
      expect(lastEvent(after)).toMatchObject({
        state: "queued",
        reason: "node_lost",
        error: { code: "node.lost" },
        node_id: null,
      });
      expect(lastEvent(after).error?.message).toContain(NODE);
    },
  );

  it("counts attempts from the last retry", () => {
    expect(nodeLost(jobIn("running", { attempt: 3, max_attempts: 3, attempt_base: 1 }), NOW).state).toBe("queued");
    expect(nodeLost(jobIn("running", { attempt: 4, max_attempts: 3, attempt_base: 1 }), NOW).state).toBe("failed");
  });

  it.each(["assigned", "running"] as const)("fails a %s job with `node.lost` once its attempts are spent", (state) => {
    const before = jobIn(state, { attempt: 3, max_attempts: 3 });
    const after = nodeLost(before, NOW);
    expect(after).toMatchObject({
      state: "failed",
      attempt: 3,
      node_id: NODE,
      error: { code: "node.lost" },
      finished_at: NOW_ISO,
      deadline_at: null,
    });
    expect(lastEvent(after)).toMatchObject({ state: "failed", reason: "node_lost", error: { code: "node.lost" } });
  });
});

describe("the pending reason marks a queued record", () => {
  // mayBeQueued reads a record's bytes for a string pending_reason: every way into `queued` must set one, every way out clear it.
  it("every transition into queued leaves a reason that mayBeQueued sees", () => {
    const intoQueued = [
      retry(jobIn("failed"), NOW),
      retry(jobIn("timed_out"), NOW),
      nodeLost(jobIn("running"), NOW),
      nodeLost(jobIn("assigned"), NOW),
      requeueUnreserved(jobIn("assigned"), NOW),
      finish(jobIn("running", { retry: POLICY }), 1, NODE, { outcome: "failed", exit_code: 2 }, NOW, () => 0),
    ];
    for (const record of intoQueued) {
      expect(record.state).toBe("queued");
      expect(mayBeQueued(encodeJson(record))).toBe(true);
    }
  });

  it("every transition out of queued clears it, so mayBeQueued rules the record out without parsing", () => {
    const outOfQueued = [
      assign(jobIn("queued"), NODE, NOW),
      start(jobIn("assigned"), 1, NODE, NOW),
      finish(jobIn("running"), 1, NODE, { outcome: "succeeded", exit_code: 0 } as RunResult, NOW),
      cancel(jobIn("queued"), NOW),
      cancel(jobIn("running"), NOW),
      timeOut(jobIn("running"), NOW),
      nodeLost(jobIn("running", { attempt: 3, max_attempts: 3 }), NOW),
      expireInQueue(jobIn("queued", { queue_timeout_seconds: 60 }), NOW),
    ];
    for (const record of outOfQueued) {
      expect(record.state).not.toBe("queued");
      expect(mayBeQueued(encodeJson(record))).toBe(false);
    }
  });

  it("a user's metadata key named pending_reason only costs a parse, it never hides a queued job", () => {
    const disguised = jobIn("running", { metadata: { pending_reason: "x" } });
    expect(mayBeQueued(encodeJson(disguised))).toBe(true);
  });
});

/** Up to 2 retries, 10 s then 20 s apart (no jitter unless a test says). */
const POLICY = { max_retries: 2, backoff: { initial_seconds: 10, factor: 2, max_seconds: 600, jitter: 0 } };

describe("automatic retry", () => {
  it("a failed attempt the policy matches ends in the timeline, then the job waits in the queue for its backoff", () => {
    const before = jobIn("running", { retry: POLICY });
    const after = finish(before, 1, NODE, { outcome: "failed", exit_code: 2 }, NOW, () => 0);
    const next = new Date(NOW + 10_000).toISOString();
    expect(after).toMatchObject({
      state: "queued",
      pending_reason: "retry_backoff",
      next_attempt_at: next,
      retry_count: 1,
      attempt: 1,
      attempt_base: 1,
      node_id: null,
      exit_code: null,
      error: null,
      started_at: null,
      finished_at: null,
      deadline_at: null,
      queued_at: NOW_ISO,
    });
    // The attempt's end stays in the timeline as billing and the user read it, then the retry.
    expect(after.timeline.slice(-2)).toEqual([
      expect.objectContaining({
        state: "failed",
        attempt: 1,
        node_id: NODE,
        exit_code: 2,
        error: expect.objectContaining({ code: "job.exit_nonzero" }),
      }),
      expect.objectContaining({
        state: "queued",
        attempt: 1,
        reason: "retry_scheduled",
        exit_code: 2,
        error: expect.objectContaining({ code: "job.exit_nonzero" }),
        next_attempt_at: next,
      }),
    ]);
  });

  it("each retry waits longer, by the backoff of the retries made so far", () => {
    const after = finish(
      jobIn("running", { retry: POLICY, retry_count: 1 }),
      1,
      NODE,
      { outcome: "failed", exit_code: 2 },
      NOW,
      () => 0,
    );
    expect(after).toMatchObject({ retry_count: 2, next_attempt_at: new Date(NOW + 20_000).toISOString() });
  });

  it("ends the job failed once max_retries are spent", () => {
    const after = finish(
      jobIn("running", { retry: POLICY, retry_count: 2 }),
      1,
      NODE,
      { outcome: "failed", exit_code: 2 },
      NOW,
      () => 0,
    );
    expect(after).toMatchObject({ state: "failed", exit_code: 2, retry_count: 2, pending_reason: null });
  });

  it("ends the job failed at once when the exit code is not in on_exit_codes", () => {
    const retry = { ...POLICY, on_exit_codes: [75] };
    expect(finish(jobIn("running", { retry }), 1, NODE, { outcome: "failed", exit_code: 2 }, NOW).state).toBe("failed");
    expect(finish(jobIn("running", { retry }), 1, NODE, { outcome: "failed", exit_code: 75 }, NOW).state).toBe(
      "queued",
    );
  });

  it("never retries a success or a cancel", () => {
    expect(
      finish(jobIn("running", { retry: POLICY }), 1, NODE, { outcome: "succeeded", exit_code: 0 }, NOW).state,
    ).toBe("succeeded");
    expect(cancel(jobIn("running", { retry: POLICY }), NOW).state).toBe("cancelled");
  });

  it("retries a timeout the policy matches, keeping the timed_out end in the timeline", () => {
    const after = timeOut(jobIn("running", { retry: { ...POLICY, on_codes: ["job.timed_out"] } }), NOW, () => 0);
    expect(after).toMatchObject({ state: "queued", pending_reason: "retry_backoff", retry_count: 1 });
    expect(after.timeline.slice(-2).map((event) => [event.state, event.reason])).toEqual([
      ["timed_out", "timed_out"],
      ["queued", "retry_scheduled"],
    ]);
  });

  it("node loss: requeued at once while attempts remain (no retry counted), retried by the policy once they are spent", () => {
    const retry = { ...POLICY, on_codes: ["node.lost"] };
    expect(nodeLost(jobIn("running", { retry, max_attempts: 2 }), NOW)).toMatchObject({
      state: "queued",
      pending_reason: "waiting_for_scheduler",
      retry_count: 0,
    });
    const spent = nodeLost(jobIn("running", { retry, max_attempts: 1 }), NOW, () => 0);
    expect(spent).toMatchObject({ state: "queued", pending_reason: "retry_backoff", retry_count: 1, attempt_base: 1 });
    expect(lastEvent(spent)).toMatchObject({ reason: "retry_scheduled", error: { code: "node.lost" } });
  });

  it("adds the jitter the random source draws", () => {
    const retry = { ...POLICY, backoff: { ...POLICY.backoff, jitter: 0.5 } };
    const after = finish(jobIn("running", { retry }), 1, NODE, { outcome: "failed", exit_code: 2 }, NOW, () => 0.5);
    expect(after.next_attempt_at).toBe(new Date(NOW + 12_500).toISOString());
  });

  it("a manual retry keeps the count of automatic retries", () => {
    expect(retry(jobIn("failed", { retry: POLICY, retry_count: 2 }), NOW).retry_count).toBe(2);
  });
});

describe("expireInQueue", () => {
  it("cancels a queued job past its queue timeout with `job.queue_timeout`", () => {
    const after = expireInQueue(jobIn("queued", { queue_timeout_seconds: 60 }), NOW);
    expect(after).toMatchObject({
      state: "cancelled",
      error: { code: "job.queue_timeout" },
      pending_reason: null,
      next_attempt_at: null,
      finished_at: NOW_ISO,
    });
    expect(lastEvent(after)).toMatchObject({
      state: "cancelled",
      reason: "queue_timeout",
      error: { code: "job.queue_timeout" },
    });
  });

  it("counts from run_at when the job has one", () => {
    const runAt = new Date(NOW - 30_000).toISOString();
    const job = jobIn("queued", { queue_timeout_seconds: 60, run_at: runAt, next_attempt_at: runAt });
    expect(thrown(() => expireInQueue(job, NOW)).code).toBe("state.conflict");
    expect(expireInQueue(job, NOW + 30_000).state).toBe("cancelled");
  });

  it("refuses a job before its deadline, without a queue timeout, once an attempt has started, or not queued", () => {
    const requeued = nodeLost(jobIn("running", { queue_timeout_seconds: 60 }), NOW);
    for (const job of [
      jobIn("queued", { queue_timeout_seconds: 3600 }),
      jobIn("queued"),
      requeued,
      jobIn("assigned", { queue_timeout_seconds: 60 }),
    ]) {
      expect(thrown(() => expireInQueue(job, NOW)).code).toBe("state.conflict");
    }
  });
});
