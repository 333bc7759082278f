import { describe, expect, it } from "vitest";
import { queuedJobRecord } from "../../../test/harness/job-records.js";
import { AppError } from "../../../shared/errors/index.js";
import type { JobRevision } from "../partitions/job-revision.js";
import { failDependency, releaseDependency } from "../jobs/transitions.js";
import { WaitingJobs, type ParentEnd } from "./waiting-jobs.js";

const NOW = Date.parse("2026-03-01T00:10:00.000Z");
const PARENT_A = "job_000000000000000000PA";
const PARENT_B = "job_000000000000000000PB";

function revision(key: string, rev: number, record: Record<string, unknown> | null): JobRevision {
  return { key, revision: rev, record, data: new Uint8Array() };
}

describe("WaitingJobs", () => {
  it("indexes a queued job by the jobs of its business it waits on, and forgets it once it waits no more", () => {
    const waiting = new WaitingJobs();
    waiting.apply(revision("app1.biz.child", 1, { state: "queued", waiting_on: [PARENT_A, PARENT_B] }));
    expect(waiting.childrenOf(`app1.biz.${PARENT_A}`)).toEqual(["app1.biz.child"]);
    expect(waiting.childrenOf(`app1.biz.${PARENT_B}`)).toEqual(["app1.biz.child"]);
    waiting.apply(revision("app1.biz.child", 2, { state: "queued", waiting_on: [PARENT_B] }));
    expect(waiting.childrenOf(`app1.biz.${PARENT_A}`)).toEqual([]);
    waiting.apply(revision("app1.biz.child", 3, { state: "cancelled", waiting_on: [PARENT_B] }));
    expect(waiting.size).toBe(0);
    expect(waiting.childrenOf(`app1.biz.${PARENT_B}`)).toEqual([]);
  });

  it("tells of a waited-for job that ended or was deleted, never of one still running or of a job nobody waits for", () => {
    const ends: Array<[string, ParentEnd]> = [];
    const waiting = new WaitingJobs((key, end) => ends.push([key, end]));
    waiting.apply(revision("app1.biz.other", 1, { state: "failed" }));
    waiting.apply(revision("app1.biz.child", 2, { state: "queued", waiting_on: [PARENT_A] }));
    waiting.apply(revision(`app1.biz.${PARENT_A}`, 3, { state: "running" }));
    waiting.apply(revision(`app1.biz.${PARENT_A}`, 4, { state: "failed" }));
    waiting.apply(revision(`app1.biz.${PARENT_A}`, 5, null));
    expect(ends).toEqual([
      [`app1.biz.${PARENT_A}`, "failed"],
      [`app1.biz.${PARENT_A}`, null],
    ]);
  });

  it("ignores a revision older than the one it holds", () => {
    const waiting = new WaitingJobs();
    waiting.apply(revision("app1.biz.child", 5, { state: "cancelled" }));
    waiting.apply(revision("app1.biz.child", 6, { state: "queued", waiting_on: [PARENT_A] }));
    waiting.apply(revision("app1.biz.child", 4, { state: "queued", waiting_on: [PARENT_B] }));
    expect(waiting.entries()).toEqual([{ childKey: "app1.biz.child", parentKeys: [`app1.biz.${PARENT_A}`] }]);
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
