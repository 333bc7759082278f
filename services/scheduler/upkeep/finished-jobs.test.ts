import { describe, expect, it } from "vitest";
import { FinishedJobs } from "./finished-jobs.js";

const DAY_MS = 86_400_000;
const T0 = Date.parse("2026-01-01T00:00:00.000Z");

function revision(key: string, rev: number, record: Record<string, unknown> | null) {
  return { key, revision: rev, record, data: new Uint8Array() };
}

function finishedAt(state: string, atMs: number | null) {
  return { state, finished_at: atMs === null ? null : new Date(atMs).toISOString() };
}

describe("FinishedJobs", () => {
  it("keeps terminal jobs only, and drops one that is retried or deleted", () => {
    const finished = new FinishedJobs();
    finished.apply(revision("app.biz.a", 1, finishedAt("succeeded", T0)));
    finished.apply(revision("app.biz.b", 2, finishedAt("running", null)));
    finished.apply(revision("app.biz.c", 3, finishedAt("cancelled", T0)));
    expect(finished.size).toBe(2);
    finished.apply(revision("app.biz.a", 4, finishedAt("queued", null)));
    finished.apply(revision("app.biz.c", 5, null));
    expect(finished.size).toBe(0);
  });

  it("ignores a revision older than the one it holds", () => {
    const finished = new FinishedJobs();
    finished.apply(revision("app.biz.a", 5, null));
    finished.apply(revision("app.biz.a", 7, finishedAt("failed", T0)));
    finished.apply(revision("app.biz.a", 6, finishedAt("queued", null)));
    expect(finished.size).toBe(1);
  });

  it("answers the jobs due by each business's own retention, oldest first, up to the limit, with the total due", () => {
    const finished = new FinishedJobs();
    finished.apply(revision("app.free.a", 1, finishedAt("succeeded", T0 + 2 * DAY_MS)));
    finished.apply(revision("app.free.b", 2, finishedAt("failed", T0)));
    finished.apply(revision("app.free.c", 3, finishedAt("timed_out", T0 + 20 * DAY_MS)));
    finished.apply(revision("app.team.d", 4, finishedAt("succeeded", T0)));
    finished.apply(revision("app.unknown.e", 5, finishedAt("succeeded", T0)));
    expect(finished.businesses()).toEqual(new Set(["app.free", "app.team", "app.unknown"]));
    const retention = new Map([
      ["app.free", 30 * DAY_MS],
      ["app.team", 90 * DAY_MS],
    ]);
    const { jobs, total } = finished.due(T0 + 33 * DAY_MS, (business) => retention.get(business), 1);
    expect(total).toBe(2);
    expect(jobs).toEqual([{ key: "app.free.b", business: "app.free", revision: 2, finishedMs: T0 }]);
    expect(
      finished.due(T0 + 33 * DAY_MS, (business) => retention.get(business), 10).jobs.map((job) => job.key),
    ).toEqual(["app.free.b", "app.free.a"]);
  });

  it("forgets a job only up to the revision the sweep decided on", () => {
    const finished = new FinishedJobs();
    finished.apply(revision("app.biz.a", 1, finishedAt("failed", T0)));
    finished.apply(revision("app.biz.a", 3, finishedAt("failed", T0 + DAY_MS)));
    finished.forget("app.biz.a", 1);
    expect(finished.size).toBe(1);
    finished.forget("app.biz.a", 3);
    expect(finished.size).toBe(0);
  });
});
