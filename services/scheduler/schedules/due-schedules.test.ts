import { describe, expect, it } from "vitest";
import type { Versioned } from "../../../shared/nats/index.js";
import { DueSchedules, RESYNC_MS } from "./due-schedules.js";
import type { ScheduleRecord } from "./schedule-record.js";
import type { Schedules } from "./schedule-store.js";

const NOW = Date.parse("2026-05-01T12:00:00.000Z");

function record(key: string, overrides: Partial<ScheduleRecord> = {}): ScheduleRecord {
  return {
    schedule_id: `sch_${key.repeat(20)}`,
    app_id: "app",
    business_id: "biz_00000000000000000000",
    user_id: "usr_00000000000000000000",
    name: null,
    cron: "* * * * *",
    timezone: "UTC",
    job: {
      type: "shell",
      command: ["true"],
      env: {},
      resources: { cpu: 1, memory_mb: 512, gpu: 0 },
      timeout_seconds: 60,
      pool_id: "default",
      labels: {},
      priority: 0,
      metadata: {},
      max_attempts: 1,
    },
    overlap: "skip",
    state: "active",
    next_run_at: new Date(NOW).toISOString(),
    last_run_at: null,
    last_job_id: null,
    last_error: null,
    last_skipped_at: null,
    skipped_count: 0,
    created_at: new Date(NOW).toISOString(),
    updated_at: new Date(NOW).toISOString(),
    ...overrides,
  };
}

/** A bucket of fixed records, read by the resync (the watch is not started here). */
function bucketOf(stored: Record<string, Versioned<ScheduleRecord>>): Schedules {
  return {
    keys: async () => Object.keys(stored),
    get: async (key: string) => stored[key] ?? null,
  } as unknown as Schedules;
}

describe("DueSchedules", () => {
  it("answers the active schedules whose tick has come, not the paused or later ones", async () => {
    const due = new DueSchedules(
      bucketOf({
        a: { value: record("a"), revision: 1 },
        b: { value: record("b", { next_run_at: new Date(NOW + 1000).toISOString() }), revision: 2 },
        c: { value: record("c", { state: "paused", next_run_at: null }), revision: 3 },
      }),
    );
    expect(await due.dueKeys(NOW)).toEqual(["a"]);
    expect((await due.dueKeys(NOW + 1000)).sort()).toEqual(["a", "b"]);
  });

  it("keeps the newest revision it has seen, and forgets a schedule read as gone", async () => {
    const due = new DueSchedules(bucketOf({}));
    await due.dueKeys(NOW);
    due.note("a", { value: record("a", { next_run_at: new Date(NOW + 60_000).toISOString() }), revision: 5 });
    due.note("a", { value: record("a"), revision: 4 });
    expect(await due.dueKeys(NOW)).toEqual([]);
    due.note("a", { value: record("a"), revision: 6 });
    expect(await due.dueKeys(NOW)).toEqual(["a"]);
    due.note("a", null);
    expect(await due.dueKeys(NOW)).toEqual([]);
  });

  it("reads the whole bucket again once a resync is due", async () => {
    const stored: Record<string, Versioned<ScheduleRecord>> = {};
    const due = new DueSchedules(bucketOf(stored));
    expect(await due.dueKeys(NOW)).toEqual([]);
    stored.a = { value: record("a"), revision: 1 };
    expect(await due.dueKeys(NOW + RESYNC_MS - 1)).toEqual([]);
    expect(await due.dueKeys(NOW + RESYNC_MS)).toEqual(["a"]);
  });
});
