import { describe, expect, it } from "vitest";
import { queuedJobRecord } from "../../../test/harness/job-records.js";
import { AppError } from "../../../shared/errors/index.js";
import { jobKey, jobPartition } from "../../../shared/records/index.js";
import type { JobRevision } from "../partitions/job-revision.js";
import { failDependency, releaseDependency } from "../jobs/transitions.js";
import { WaitingJobs, type ParentEnd } from "./waiting-jobs.js";

const NOW = Date.parse("2026-03-01T00:10:00.000Z");
const PARENT_A = "job_000000000000000000PA";
const PARENT_B = "job_000000000000000000PB";

function revision(key: string, rev: number, record: Record<string, unknown> | null): JobRevision {
  return { key, revision: rev, record, data: new Uint8Array() };
}

const APP = "app1";
const BIZ = "biz_BBBBBBBBBBBBBBBBBBBB";
const CHILD = jobKey(APP, BIZ, "job_0000000000000000CHLD");
const OTHER = jobKey(APP, BIZ, "job_0000000000000000OTHR");
const keyOf = (jobId: string) => jobKey(APP, BIZ, jobId);

describe("WaitingJobs", () => {
  it("indexes a queued job by the jobs of its business it waits on, and forgets it once it waits no more", () => {
    const waiting = new WaitingJobs();
    waiting.apply(revision(CHILD, 1, { state: "queued", waiting_on: [PARENT_A, PARENT_B] }));
    expect(waiting.childrenOf(keyOf(PARENT_A))).toEqual([CHILD]);
    expect(waiting.childrenOf(keyOf(PARENT_B))).toEqual([CHILD]);
    waiting.apply(revision(CHILD, 2, { state: "queued", waiting_on: [PARENT_B] }));
    expect(waiting.childrenOf(keyOf(PARENT_A))).toEqual([]);
    waiting.apply(revision(CHILD, 3, { state: "cancelled", waiting_on: [PARENT_B] }));
    expect(waiting.size).toBe(0);
    expect(waiting.childrenOf(keyOf(PARENT_B))).toEqual([]);
  });

  it("tells of a waited-for job that ended or was deleted, never of one still running or of a job nobody waits for", () => {
    const ends: Array<[string, ParentEnd]> = [];
    const waiting = new WaitingJobs((key, end) => ends.push([key, end]));
    waiting.apply(revision(OTHER, 1, { state: "failed" }));
    waiting.apply(revision(CHILD, 2, { state: "queued", waiting_on: [PARENT_A] }));
    waiting.apply(revision(keyOf(PARENT_A), 3, { state: "running" }));
    waiting.apply(revision(keyOf(PARENT_A), 4, { state: "failed" }));
    waiting.apply(revision(keyOf(PARENT_A), 5, null));
    expect(ends).toEqual([
      [keyOf(PARENT_A), "failed"],
      [keyOf(PARENT_A), null],
    ]);
  });

  it("tells of a job that ended with dependents named in its record, which may wait in another replica's partitions", () => {
    const ends: Array<[string, ParentEnd, readonly string[]]> = [];
    const waiting = new WaitingJobs((key, end, dependents) => ends.push([key, end, dependents]));
    waiting.apply(revision(keyOf(PARENT_A), 1, { state: "running", dependents: ["job_0000000000000000ELSE"] }));
    waiting.apply(revision(keyOf(PARENT_A), 2, { state: "succeeded", dependents: ["job_0000000000000000ELSE"] }));
    expect(ends).toEqual([[keyOf(PARENT_A), "succeeded", ["job_0000000000000000ELSE"]]]);
  });

  it("ignores a revision older than the one it holds", () => {
    const waiting = new WaitingJobs();
    waiting.apply(revision(CHILD, 5, { state: "cancelled" }));
    waiting.apply(revision(CHILD, 6, { state: "queued", waiting_on: [PARENT_A] }));
    waiting.apply(revision(CHILD, 4, { state: "queued", waiting_on: [PARENT_B] }));
    expect(waiting.entries()).toEqual([{ childKey: CHILD, parentKeys: [keyOf(PARENT_A)] }]);
  });

  it("forgets the waiting jobs of a partition this replica gave up", () => {
    const waiting = new WaitingJobs();
    waiting.apply(revision(CHILD, 1, { state: "queued", waiting_on: [PARENT_A] }));
    waiting.dropPartition(jobPartition("job_0000000000000000CHLD"));
    expect(waiting.size).toBe(0);
    expect(waiting.childrenOf(keyOf(PARENT_A))).toEqual([]);
  });
});

describe("dependency transitions", () => {
  it("a succeeded parent shortens the wait, and the last one releases the job with a `released` event", () => {
    const child = queuedJobRecord({ waiting_on: [PARENT_A, PARENT_B] });
    const one = releaseDependency(child, PARENT_A, NOW);
    expect(one).toMatchObject({ state: "queued", waiting_on: [PARENT_B] });
    expect(one.timeline).toHaveLength(1);
    const both = releaseDependency(one, PARENT_B, NOW);
    expect(both).toMatchObject({ state: "queued", waiting_on: [], pending_reason: "waiting_for_scheduler" });
    expect(both.timeline.at(-1)).toMatchObject({ state: "queued", reason: "released" });
  });

  it("a parent that did not succeed cancels the job with job.dependency_failed naming it", () => {
    const cancelled = failDependency(queuedJobRecord({ waiting_on: [PARENT_A] }), PARENT_A, "timed_out", NOW);
    expect(cancelled).toMatchObject({
      state: "cancelled",
      pending_reason: null,
      error: { code: "job.dependency_failed" },
    });
    expect(cancelled.error?.message).toContain(PARENT_A);
    expect(cancelled.timeline.at(-1)).toMatchObject({
      state: "cancelled",
      reason: "dependency_failed",
      error: { code: "job.dependency_failed" },
    });
  });

  it("settles a job once: one no longer waiting, or no longer queued, is a conflict", () => {
    const released = queuedJobRecord({ waiting_on: [] });
    expect(() => releaseDependency(released, PARENT_A, NOW)).toThrow(AppError);
    expect(() =>
      failDependency(queuedJobRecord({ state: "cancelled", waiting_on: [PARENT_A] }), PARENT_A, "failed", NOW),
    ).toThrow(AppError);
  });
});
