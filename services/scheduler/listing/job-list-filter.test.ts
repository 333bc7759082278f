import { describe, expect, it } from "vitest";
import type { ListJobsRequest } from "../../../shared/contract/index.js";
import { jobListFaceOf, jobListFilterOf, matchesJobListFilter, type JobListFace } from "./job-list-filter.js";

const JOB: JobListFace = {
  state: "queued",
  pool_id: "default",
  type: "shell",
  node_id: null,
  created_ms: Date.parse("2026-03-01T00:00:00.000Z"),
  labels: {},
  name: "nightly-report",
  metadata: { team: "ml", query: "a=b" },
  schedule_id: "sch_SSSSSSSSSSSSSSSSSSSS",
};

const matches = (body: Partial<ListJobsRequest>, job: JobListFace = JOB) =>
  matchesJobListFilter(jobListFilterOf({ limit: 50, ...body }), job);

describe("the list filters on a record read for a page", () => {
  it("need every metadata pair, split at the first `=`", () => {
    expect(matches({ metadata: "query=a=b" })).toBe(true);
    expect(matches({ metadata: ["team=ml", "query=a=b"] })).toBe(true);
    expect(matches({ metadata: ["team=ml", "query=a"] })).toBe(false);
    expect(matches({ metadata: "missing=" })).toBe(false);
  });

  it("match a name by its prefix and never a job without a name", () => {
    expect(matches({ name_prefix: "nightly" })).toBe(true);
    expect(matches({ name_prefix: "Nightly" })).toBe(false);
    expect(matches({ name_prefix: "nightly" }, { ...JOB, name: null })).toBe(false);
  });

  it("match the schedule exactly", () => {
    expect(matches({ schedule_id: "sch_SSSSSSSSSSSSSSSSSSSS" })).toBe(true);
    expect(matches({ schedule_id: "sch_TTTTTTTTTTTTTTTTTTTT" })).toBe(false);
    expect(matches({ schedule_id: "sch_SSSSSSSSSSSSSSSSSSSS" }, { ...JOB, schedule_id: null })).toBe(false);
  });

  it("read a record stored before schedules, names and metadata were listed as having none", () => {
    const face = jobListFaceOf({
      state: "queued",
      pool_id: "default",
      type: "shell",
      node_id: null,
      created_at: "2026-03-01T00:00:00.000Z",
      labels: {},
    });
    expect(face).toMatchObject({ name: null, metadata: {}, schedule_id: null });
  });
});
