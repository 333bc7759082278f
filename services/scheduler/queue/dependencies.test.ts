import { describe, expect, it } from "vitest";
import { queuedJobRecord } from "../../../test/harness/job-records.js";
import type { JobState } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { type JobRecord, jobKey } from "../../../shared/records/index.js";
import { checkDependencies, MAX_DEPENDENTS } from "./dependencies.js";
import type { SchedulerContext } from "../scheduler-context.js";

const CALLER = { app_id: "app1", business_id: "biz_CCCCCCCCCCCCCCCCCCCC" };
const DONE = "job_00000000000000000DNE";
const RUNNING = "job_00000000000000000RUN";
const FULL = "job_0000000000000000FULL";
const MISSING = "job_0000000000000000MISS";

/** A scheduler whose job bucket holds these records of the caller's business, read by key. */
function schedulerWith(records: Array<Partial<JobRecord> & { job_id: string; state: JobState }>): SchedulerContext {
  const byKey = new Map(
    records.map((record) => [
      jobKey(CALLER.app_id, CALLER.business_id, record.job_id),
      { value: queuedJobRecord({ ...CALLER, ...record }), revision: 1 },
    ]),
  );
  return { store: { jobs: { get: async (key: string) => byKey.get(key) ?? null } } } as unknown as SchedulerContext;
}

async function refusal(call: Promise<unknown>): Promise<AppError> {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe("checkDependencies", () => {
  const ctx = schedulerWith([
    { job_id: DONE, state: "succeeded" },
    { job_id: RUNNING, state: "running" },
    {
      job_id: FULL,
      state: "queued",
      dependents: Array.from({ length: MAX_DEPENDENTS }, (_, index) => `job_${String(index).padStart(20, "0")}`),
    },
  ]);

  it("waits only on the parents that have not succeeded", async () => {
    expect(await checkDependencies(ctx, CALLER, [DONE, RUNNING])).toMatchObject({
      waitingOn: [RUNNING],
      parents: [{ id: DONE }, { id: RUNNING }],
    });
    expect(await checkDependencies(ctx, CALLER, undefined)).toEqual({ parents: [], waitingOn: [] });
  });

  it("refuses an id given twice (400), a job not in the business (404 naming it) and a parent with the most dependents (409)", async () => {
    expect(await refusal(checkDependencies(ctx, CALLER, [RUNNING, RUNNING]))).toMatchObject({
      code: "request.invalid",
    });
    expect(await refusal(checkDependencies(ctx, CALLER, [RUNNING, MISSING]))).toMatchObject({
      code: "resource.not_found",
      details: { job_id: MISSING },
    });
    expect(
      await refusal(checkDependencies(ctx, { ...CALLER, business_id: "biz_OOOOOOOOOOOOOOOOOOOO" }, [RUNNING])),
    ).toMatchObject({ code: "resource.not_found", details: { job_id: RUNNING } });
    expect(await refusal(checkDependencies(ctx, CALLER, [FULL]))).toMatchObject({
      code: "state.conflict",
      details: { job_id: FULL, state: "queued" },
    });
  });
});
