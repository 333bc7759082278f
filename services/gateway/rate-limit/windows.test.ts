import { describe, expect, it } from "vitest";
import {
  decide,
  decideMany,
  headroomOf,
  rateLimitHeaders,
  type RateLimitPolicy,
  type RateLimitRecord,
} from "./windows.js";

/** The second window wide enough to stay out of the way of the minute and hour cases. */
const policy: RateLimitPolicy = { second: 100, minute: 3, hour: 5 };
const T0 = Date.parse("2026-06-01T10:00:00.250Z");

/** Runs `count` requests at `nowMs` from `record`, each admitted one writing its `next`; returns the record after them. */
function run(record: RateLimitRecord | null, nowMs: number, count: number) {
  let state = record;
  for (let index = 0; index < count; index += 1) {
    const decision = decide(state, nowMs, policy);
    if (decision.admitted) state = decision.next;
  }
  return { state };
}

function admittedState(decision: ReturnType<typeof decide>): RateLimitRecord {
  if (!decision.admitted) throw new Error("expected an admitted request");
  return decision.next;
}

describe("rate-limit windows", () => {
  it("the first request opens every window and counts once in each", () => {
    const decision = decide(null, T0, policy);
    expect(decision).toMatchObject({
      admitted: true,
      next: {
        second: { start_ms: T0, count: 1 },
        minute: { start_ms: T0, count: 1 },
        hour: { start_ms: T0, count: 1 },
      },
      binding: { window: "minute", limit: 3, remaining: 2, resetMs: 60_000 },
    });
  });

  it("refuses the request past the minute limit and counts nothing for it", () => {
    const { state } = run(null, T0, 3);
    const refused = decide(state, T0 + 10_000, policy);
    expect(refused).toMatchObject({
      admitted: false,
      retryAfterSeconds: 50,
      binding: { window: "minute", remaining: 0, resetMs: 50_000 },
    });
    expect(state?.minute.count).toBe(3);
  });

  it("Retry-After is rounded up: a retry after it is admitted, a second earlier is not", () => {
    const { state } = run(null, T0, 3);
    const at = T0 + 12_345;
    const refused = decide(state, at, policy);
    if (refused.admitted) throw new Error("expected a refusal");
    expect(refused.retryAfterSeconds).toBe(48);
    expect(decide(state, at + refused.retryAfterSeconds * 1000, policy).admitted).toBe(true);
    expect(decide(state, at + (refused.retryAfterSeconds - 1) * 1000, policy).admitted).toBe(false);
  });

  it("a window less than a second from its reset still asks for a wait of one second", () => {
    const { state } = run(null, T0, 3);
    const refused = decide(state, T0 + 59_800, policy);
    expect(refused).toMatchObject({ admitted: false, retryAfterSeconds: 1 });
  });

  it("a request after the minute window ends opens a new one at that instant", () => {
    const { state } = run(null, T0, 3);
    const next = admittedState(decide(state, T0 + 60_000, policy));
    expect(next.minute).toEqual({ start_ms: T0 + 60_000, count: 1 });
    expect(next.hour).toEqual({ start_ms: T0, count: 4 });
  });

  it("refuses past the hour limit until the hour window resets, naming the hour window", () => {
    let state = run(null, T0, 3).state;
    state = run(state, T0 + 60_000, 2).state;
    const at = T0 + 2 * 60_000 + 500;
    const refused = decide(state, at, policy);
    expect(refused).toMatchObject({ admitted: false, binding: { window: "hour", limit: 5, remaining: 0 } });
    if (refused.admitted) throw new Error("expected a refusal");
    expect(refused.retryAfterSeconds).toBe(Math.ceil((T0 + 3_600_000 - at) / 1000));
    expect(decide(state, at + refused.retryAfterSeconds * 1000, policy).admitted).toBe(true);
    expect(decide(state, at + (refused.retryAfterSeconds - 1) * 1000, policy).admitted).toBe(false);
  });

  it("when both windows are exhausted, waits for the one that resets last", () => {
    const tight: RateLimitPolicy = { second: 100, minute: 2, hour: 2 };
    let state: RateLimitRecord | null = null;
    for (let index = 0; index < 2; index += 1) state = admittedState(decide(state, T0, tight));
    const refused = decide(state, T0 + 1000, tight);
    expect(refused).toMatchObject({ admitted: false, retryAfterSeconds: 3599, binding: { window: "hour" } });
  });

  it("reports the window with the fewest requests left, and the hour once it is the tighter one", () => {
    const first = decide(null, T0, policy);
    expect(first.binding.window).toBe("minute");
    let state = run(null, T0, 3).state;
    state = admittedState(decide(state, T0 + 60_000, policy));
    const fifth = decide(state, T0 + 60_000, policy);
    expect(fifth).toMatchObject({ admitted: true, binding: { window: "hour", remaining: 0 } });
  });

  it("a counter written by a replica whose clock is ahead is still the current window", () => {
    const ahead: RateLimitRecord = { minute: { start_ms: T0 + 300, count: 3 }, hour: { start_ms: T0 + 300, count: 3 } };
    expect(decide(ahead, T0, policy)).toMatchObject({ admitted: false, retryAfterSeconds: 61 });
  });

  it("a lowered limit below a stored count reports nothing remaining, never a negative number", () => {
    const { state } = run(null, T0, 3);
    expect(decide(state, T0, { second: 100, minute: 2, hour: 5 })).toMatchObject({
      admitted: false,
      binding: { remaining: 0 },
    });
  });
});

describe("the second window: a burst bound", () => {
  const burst: RateLimitPolicy = { second: 2, minute: 10, hour: 100 };

  it("refuses the request past the second's limit, asks for a one-second wait, and counts it nowhere", () => {
    let state: RateLimitRecord | null = null;
    for (let index = 0; index < 2; index += 1) state = admittedState(decide(state, T0, burst));
    const refused = decide(state, T0 + 400, burst);
    expect(refused).toMatchObject({
      admitted: false,
      retryAfterSeconds: 1,
      binding: { window: "second", limit: 2, remaining: 0, resetMs: 600 },
    });
    expect(state?.minute.count).toBe(2);
  });

  it("admits again once the second has passed, still counting the minute from its start", () => {
    let state: RateLimitRecord | null = null;
    for (let index = 0; index < 2; index += 1) state = admittedState(decide(state, T0, burst));
    const next = admittedState(decide(state, T0 + 1_000, burst));
    expect(next.second).toEqual({ start_ms: T0 + 1_000, count: 1 });
    expect(next.minute).toEqual({ start_ms: T0, count: 3 });
  });

  it("a minute spent a burst at a time is refused by the minute, for the minute's remaining wait", () => {
    let state: RateLimitRecord | null = null;
    for (let second = 0; second < 5; second += 1)
      for (let index = 0; index < 2; index += 1) state = admittedState(decide(state, T0 + second * 1_000, burst));
    const refused = decide(state, T0 + 5_000, burst);
    expect(refused).toMatchObject({ admitted: false, retryAfterSeconds: 55, binding: { window: "minute" } });
  });

  it("a record without a second window (written by an older replica) reads as a fresh second", () => {
    const older = { minute: { start_ms: T0, count: 4 }, hour: { start_ms: T0, count: 4 } } as RateLimitRecord;
    const decision = decide(older, T0 + 10, burst);
    expect(decision).toMatchObject({ admitted: true, next: { second: { start_ms: T0 + 10, count: 1 } } });
    expect(admittedState(decision).minute.count).toBe(5);
  });

  it("the headers name the second while it is the tighter window, the minute once that is", () => {
    expect(decide(null, T0, burst)).toMatchObject({ binding: { window: "second", remaining: 1 } });
    let state: RateLimitRecord | null = null;
    for (let second = 0; second < 4; second += 1)
      for (let index = 0; index < 2; index += 1) state = admittedState(decide(state, T0 + second * 1_000, burst));
    expect(decide(state, T0 + 4_000, burst)).toMatchObject({ binding: { window: "minute", remaining: 1 } });
  });
});

describe("headroom, read without counting", () => {
  it("is the binding window as the last counted request left it, and the same when read again", () => {
    const { state } = run(null, T0, 2);
    const room = headroomOf(state, T0 + 1000, policy);
    expect(room).toEqual({ window: "minute", limit: 3, remaining: 1, resetMs: 59_000 });
    expect(headroomOf(state, T0 + 1000, policy)).toEqual(room);
  });

  it("is the whole budget for a user never counted or whose windows ended", () => {
    expect(headroomOf(null, T0, policy)).toMatchObject({ window: "minute", remaining: 3 });
    const { state } = run(null, T0, 2);
    expect(headroomOf(state, T0 + 3_600_000, policy)).toMatchObject({ remaining: 3 });
  });
});

describe("requests decided together", () => {
  it("are decided in turn: each sees the ones before it, and only the admitted ones are written", () => {
    const { state } = run(null, T0, 1);
    const { decisions, next } = decideMany(state, T0 + 1000, policy, 4);
    expect(decisions.map((decision) => decision.admitted)).toEqual([true, true, false, false]);
    expect(decisions.map((decision) => decision.binding.remaining)).toEqual([1, 0, 0, 0]);
    expect(next?.minute).toEqual({ start_ms: T0, count: 3 });
    expect(next?.hour).toEqual({ start_ms: T0, count: 3 });
  });

  it("write nothing when none is admitted", () => {
    const { state } = run(null, T0, 3);
    expect(decideMany(state, T0, policy, 2).next).toBeNull();
  });
});

describe("RateLimit headers", () => {
  it("describe the binding window in whole seconds and list every window in the policy", () => {
    expect(
      rateLimitHeaders(
        { second: 50, minute: 1000, hour: 30000 },
        { window: "minute", limit: 1000, remaining: 998, resetMs: 41_200 },
      ),
    ).toEqual({
      "ratelimit-limit": "1000",
      "ratelimit-remaining": "998",
      "ratelimit-reset": "42",
      "ratelimit-policy": "50;w=1, 1000;w=60, 30000;w=3600",
    });
  });
});
