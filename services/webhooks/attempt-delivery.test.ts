import { describe, expect, it } from "vitest";
import { afterAttempt } from "./attempt-delivery.js";
import type { DeliveryRecord } from "./records.js";
import { pauseAfterSeconds } from "./retry-schedule.js";

const created = Date.parse("2026-11-24T00:00:00.000Z");
const record: DeliveryRecord = {
  delivery_id: "dlv_00000000000000000000000000000000",
  webhook_id: "whk_0123456789ABCDEFGHIJ",
  event_id: "evt_1",
  event_type: "job.succeeded",
  created_at: new Date(created).toISOString(),
  state: "pending",
  attempts: [],
  next_attempt_at: new Date(created).toISOString(),
  event: { id: "evt_1", type: "job.succeeded", created_at: new Date(created).toISOString(), data: { job: null } },
};
const tryAt = (now: number, status_code: number | null) => ({
  at: new Date(now).toISOString(),
  status_code,
  error: status_code === null ? "ECONNREFUSED" : null,
  duration_ms: 5,
});
const schedule = [10, 30, 60];
const DAY_S = 86_400;

describe("pauseAfterSeconds", () => {
  it("follows the schedule, then repeats its last pause", () => {
    expect([1, 2, 3, 4, 9].map((tries) => pauseAfterSeconds(schedule, tries))).toEqual([10, 30, 60, 60, 60]);
  });
});

describe("afterAttempt", () => {
  it("a 2xx ends the delivery as succeeded", () => {
    const after = afterAttempt(record, tryAt(created, 204), schedule, DAY_S, created);
    expect(after).toMatchObject({ state: "succeeded", next_attempt_at: null, attempts: [{ status_code: 204 }] });
  });

  it("a failure is tried again after the schedule's pause for that try", () => {
    const first = afterAttempt(record, tryAt(created, 500), schedule, DAY_S, created);
    expect(first).toMatchObject({ state: "pending", next_attempt_at: new Date(created + 10_000).toISOString() });
    const second = afterAttempt(first, tryAt(created + 10_000, null), schedule, DAY_S, created + 10_000);
    expect(second).toMatchObject({ state: "pending", next_attempt_at: new Date(created + 40_000).toISOString() });
    expect(second.attempts.map((attempt) => attempt.status_code)).toEqual([500, null]);
  });

  it("a failure whose next try would fall past the window ends the delivery as failed", () => {
    const late = created + DAY_S * 1000 - 5_000;
    expect(afterAttempt(record, tryAt(late, 500), schedule, DAY_S, late)).toMatchObject({
      state: "failed",
      next_attempt_at: null,
    });
  });

  it("a try recorded after another replica's success keeps the delivery succeeded", () => {
    const succeeded = afterAttempt(record, tryAt(created, 200), schedule, DAY_S, created);
    expect(afterAttempt(succeeded, tryAt(created, 500), schedule, DAY_S, created).state).toBe("succeeded");
  });
});
