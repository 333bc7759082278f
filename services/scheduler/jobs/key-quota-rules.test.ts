import { describe, expect, it } from "vitest";
import type { QuotaLimits } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { WINDOW_SECONDS } from "../../../shared/records/index.js";
import {
  checkJobType,
  CONCURRENCY_RETRY_AFTER_SECONDS,
  decideAdmission,
  emptyQuotaRecord,
  endedJobs,
  type KeyQuotaRecord,
  MISSING_RECORD_GRACE_MS,
  retryLimits,
  tracksAdmissions,
  withoutAdmission,
  withoutJobs,
} from "./key-quota-rules.js";

const T = 1_800_000_000_000;
const NONE: QuotaLimits = { maxJobsPerHour: null, maxConcurrentJobs: null, allowedJobTypes: null };

function admitMany(
  limits: QuotaLimits,
  count: number,
  nowOf: (index: number) => number,
  start = emptyQuotaRecord("key_a", "app", "biz"),
): { record: KeyQuotaRecord; refused: AppError[] } {
  let record = start;
  const refused: AppError[] = [];
  for (let index = 0; index < count; index += 1) {
    const decision = decideAdmission(record, limits, `job_${index}`, nowOf(index));
    if (decision.admit) record = decision.next;
    else refused.push(decision.error);
  }
  return { record, refused };
}

describe("checkJobType", () => {
  it("lets any type through without allowedJobTypes", () => {
    expect(() => checkJobType(null, "gpu")).not.toThrow();
    expect(() => checkJobType(NONE, "gpu")).not.toThrow();
  });

  it("refuses a type the key does not list with quota.job_type_not_allowed", () => {
    const limits = { ...NONE, allowedJobTypes: ["shell"] };
    expect(() => checkJobType(limits, "shell")).not.toThrow();
    expect(() => checkJobType(limits, "python")).toThrow(
      expect.objectContaining({
        code: "quota.job_type_not_allowed",
        details: expect.objectContaining({ type: "python", allowed: ["shell"] }),
      }),
    );
  });
});

describe("tracksAdmissions", () => {
  it("is false for no limits and for a type list alone: such submits write no quota record", () => {
    expect(tracksAdmissions(null)).toBe(false);
    expect(tracksAdmissions({ ...NONE, allowedJobTypes: ["shell"] })).toBe(false);
    expect(tracksAdmissions({ ...NONE, maxJobsPerHour: 1 })).toBe(true);
    expect(tracksAdmissions({ ...NONE, maxConcurrentJobs: 1 })).toBe(true);
  });
});

describe("decideAdmission", () => {
  it("admits maxJobsPerHour submits in an hour, then refuses with the seconds until the oldest leaves", () => {
    const limits = { ...NONE, maxJobsPerHour: 3 };
    const { record, refused } = admitMany(limits, 3, (index) => T + index * 60_000);
    expect(refused).toEqual([]);
    const decision = decideAdmission(record, limits, "job_x", T + 600_000 + 250);
    expect(decision.admit).toBe(false);
    if (decision.admit) return;
    expect(decision.error.code).toBe("quota.jobs_per_hour_exceeded");
    expect(decision.error.retryAfterSeconds).toBe(WINDOW_SECONDS - 600);
    expect(decision.concurrencyFull).toBe(false);
    expect(decideAdmission(record, limits, "job_x", T + WINDOW_SECONDS * 1000).admit).toBe(true);
  });

  it("admits maxConcurrentJobs jobs, then refuses until one is dropped", () => {
    const limits = { ...NONE, maxConcurrentJobs: 2 };
    const { record, refused } = admitMany(limits, 3, () => T);
    expect(refused.map((error) => [error.code, error.retryAfterSeconds])).toEqual([
      ["quota.concurrent_jobs_exceeded", CONCURRENCY_RETRY_AFTER_SECONDS],
    ]);
    expect(Object.keys(record.active)).toEqual(["job_0", "job_1"]);
    const freed = withoutJobs(record, ["job_0"]);
    expect(freed && decideAdmission(freed, limits, "job_9", T).admit).toBe(true);
  });

  it("checks the hourly limit before the concurrent one", () => {
    const limits = { ...NONE, maxJobsPerHour: 1, maxConcurrentJobs: 1 };
    const { refused } = admitMany(limits, 2, () => T);
    expect(refused.map((error) => error.code)).toEqual(["quota.jobs_per_hour_exceeded"]);
  });

  it("keeps no window without maxJobsPerHour and no active set without maxConcurrentJobs", () => {
    expect(admitMany({ ...NONE, maxConcurrentJobs: 5 }, 2, () => T).record.admitted).toEqual([]);
    expect(admitMany({ ...NONE, maxJobsPerHour: 5 }, 2, () => T).record.active).toEqual({});
  });
});

describe("retryLimits", () => {
  it("holds a retry to the concurrency limit of the key's last submit, and to nothing else", () => {
    const { record } = admitMany({ maxJobsPerHour: 1, maxConcurrentJobs: 4, allowedJobTypes: ["shell"] }, 1, () => T);
    expect(retryLimits(record)).toEqual({ maxJobsPerHour: null, maxConcurrentJobs: 4, allowedJobTypes: null });
    expect(retryLimits(admitMany({ ...NONE, maxJobsPerHour: 5 }, 1, () => T).record)).toBeNull();
  });

  it("a retry admitted at the hourly limit leaves the hour's count as it was", () => {
    const { record } = admitMany({ ...NONE, maxJobsPerHour: 1, maxConcurrentJobs: 4 }, 1, () => T);
    const limits = retryLimits(record);
    const decision = limits && decideAdmission(withoutJobs(record, ["job_0"])!, limits, "job_0", T + 1000);
    expect(decision?.admit && decision.next.admitted).toEqual([[T / 1000, 1]]);
  });
});

describe("withoutJobs and withoutAdmission", () => {
  it("withoutJobs answers undefined when none of the jobs is listed (nothing to write)", () => {
    const { record } = admitMany({ ...NONE, maxConcurrentJobs: 5 }, 1, () => T);
    expect(withoutJobs(record, ["job_other"])).toBeUndefined();
  });

  it("withoutAdmission takes the job out of both the active set and the hour", () => {
    const limits = { ...NONE, maxJobsPerHour: 5, maxConcurrentJobs: 5 };
    const { record } = admitMany(limits, 2, () => T);
    const released = withoutAdmission(record, "job_1", T, true);
    expect(Object.keys(released.active)).toEqual(["job_0"]);
    expect(released.admitted).toEqual([[T / 1000, 1]]);
  });
});

describe("endedJobs", () => {
  it("drops terminal jobs and long-missing ones; keeps live, just-admitted and unread ones", () => {
    const now = T + MISSING_RECORD_GRACE_MS + 1;
    const active = { done: T, cancelled: T, running: T, lost: T, young: now - 10, unread: T };
    const records = new Map([
      ["done", { state: "succeeded" as const }],
      ["cancelled", { state: "cancelled" as const }],
      ["running", { state: "running" as const }],
      ["lost", null],
      ["young", null],
    ]);
    expect(endedJobs(active, records, now).sort()).toEqual(["cancelled", "done", "lost"]);
  });
});
