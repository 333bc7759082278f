import { describe, expect, it } from "vitest";
import { JobState, type ListJobsRequest } from "../../../shared/contract/index.js";
import { jobListFilterOf } from "./job-list-filter.js";
import { JobListIndex } from "./job-list-index.js";

const APP = "app1";
const BUSINESS = "biz_BBBBBBBBBBBBBBBBBBBB";
const OTHER_BUSINESS = "biz_CCCCCCCCCCCCCCCCCCCC";
const NODE = "nod_NNNNNNNNNNNNNNNNNNNN";
const OTHER_NODE = "nod_MMMMMMMMMMMMMMMMMMMM";
const CREATED = Date.parse("2026-03-01T00:00:00.000Z");

/** The `n`th job id: ids sort as the numbers do, as real ids sort by creation time. */
function idOf(n: number): string {
  return `job_${String(n).padStart(8, "0")}AAAAAAAAAAAA`;
}

/** The fields of a stored record the index reads, plus one it must not need. */
function record(n: number, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    job_id: idOf(n),
    state: "queued",
    pool_id: "default",
    type: "shell",
    node_id: null,
    created_at: new Date(CREATED + n * 1000).toISOString(),
    labels: {},
    command: ["true"],
    ...fields,
  };
}

/** Counts revisions as the bucket does: every write gets the next one. */
class Bucket {
  revision = 0;
  constructor(readonly index = new JobListIndex()) {}

  put(n: number, fields: Record<string, unknown> = {}, business = BUSINESS, app = APP): number {
    this.revision += 1;
    this.index.apply({
      key: `${app}.${business}.${idOf(n)}`,
      revision: this.revision,
      record: record(n, fields),
      data: new Uint8Array(),
    });
    return this.revision;
  }

  remove(n: number, business = BUSINESS): void {
    this.revision += 1;
    this.index.apply({
      key: `${APP}.${business}.${idOf(n)}`,
      revision: this.revision,
      record: null,
      data: new Uint8Array(),
    });
  }
}

/** Every id the filter lets through, newest first, and whether more were said to follow. */
function list(index: JobListIndex, body: Partial<ListJobsRequest> = {}, count = 1000, business = BUSINESS, app = APP) {
  return index.find(app, business, jobListFilterOf({ limit: 50, ...body }), body.cursor, count);
}

function ids(...numbers: number[]): string[] {
  return numbers.map(idOf);
}

describe("the job list index", () => {
  it("lists a business's jobs newest first whatever order their records arrive in", () => {
    const bucket = new Bucket();
    // Far more than an insert may shift: a watch replaying old records puts them anywhere.
    const numbers = Array.from({ length: 12_000 }, (_, n) => n);
    const shuffled = [...numbers].sort((a, b) => ((a * 7919) % 12_007) - ((b * 7919) % 12_007));
    for (const n of shuffled) bucket.put(n);
    // Then live inserts: the newest, and one just behind it.
    bucket.put(20_001);
    bucket.put(20_000);

    const listed = list(bucket.index, {}, 20_000);
    expect(listed.ids).toEqual(ids(20_001, 20_000, ...[...numbers].reverse()));
    expect(listed.more).toBe(false);
  });

  it("filters by metadata pairs (all must match, a value may hold `=`), name prefix and schedule", () => {
    const bucket = new Bucket();
    bucket.put(1, { metadata: { team: "a", url: "x=1" }, name: "nightly-1", schedule_id: "sch_AAAAAAAAAAAAAAAAAAAA" });
    bucket.put(2, { metadata: { team: "a" }, name: "nightly-2" });
    bucket.put(3, { metadata: { team: "b", url: "x=1" }, name: null, schedule_id: "sch_AAAAAAAAAAAAAAAAAAAA" });
    bucket.put(4, { metadata: { team: "a", url: "x=1" }, name: "adhoc" });

    expect(list(bucket.index, { metadata: "team=a" }).ids).toEqual(ids(4, 2, 1));
    expect(list(bucket.index, { metadata: ["team=a", "url=x=1"] }).ids).toEqual(ids(4, 1));
    expect(list(bucket.index, { name_prefix: "nightly-" }).ids).toEqual(ids(2, 1));
    expect(list(bucket.index, { schedule_id: "sch_AAAAAAAAAAAAAAAAAAAA" }).ids).toEqual(ids(3, 1));
    expect(
      list(bucket.index, { schedule_id: "sch_AAAAAAAAAAAAAAAAAAAA", metadata: "team=a", name_prefix: "night" }).ids,
    ).toEqual(ids(1));
    expect(list(bucket.index, { schedule_id: "sch_BBBBBBBBBBBBBBBBBBBB" }).ids).toEqual([]);
  });

  it("pages with a cursor: only jobs older than it, at most `count`, and says whether more follow", () => {
    const bucket = new Bucket();
    for (let n = 1; n <= 5; n += 1) bucket.put(n);

    expect(list(bucket.index, {}, 2)).toEqual({ ids: ids(5, 4), more: true });
    expect(list(bucket.index, { cursor: idOf(4) }, 2)).toEqual({ ids: ids(3, 2), more: true });
    expect(list(bucket.index, { cursor: idOf(2) }, 2)).toEqual({ ids: ids(1), more: false });
    expect(list(bucket.index, { cursor: idOf(3) }, 2)).toEqual({ ids: ids(2, 1), more: false });
    expect(list(bucket.index, { cursor: idOf(1) }, 2)).toEqual({ ids: [], more: false });
    // A cursor that is no job here (removed, or never this business's) is a position all the same.
    expect(list(bucket.index, { cursor: `job_00000003ZZZZZZZZZZZZ` }, 2)).toEqual({ ids: ids(3, 2), more: true });
    // A job newer than the cursor never shows up on the following pages.
    bucket.put(6);
    expect(list(bucket.index, { cursor: idOf(4) }, 10).ids).toEqual(ids(3, 2, 1));
  });

  it("says no more follow when the jobs after the page do not match the filter", () => {
    const bucket = new Bucket();
    bucket.put(1);
    bucket.put(2, { state: "failed" });
    bucket.put(3, { state: "failed" });
    bucket.put(4);
    expect(list(bucket.index, { state: "failed" }, 2)).toEqual({ ids: ids(3, 2), more: false });
    expect(list(bucket.index, { state: "queued" }, 1)).toEqual({ ids: ids(4), more: true });
  });

  it("filters by one state or several", () => {
    const bucket = new Bucket();
    JobState.options.forEach((state, n) => bucket.put(n, { state }));
    expect(list(bucket.index, { state: "running" }).ids).toEqual(ids(JobState.options.indexOf("running")));
    expect(list(bucket.index, { state: ["failed", "timed_out"] }).ids).toEqual(
      ids(JobState.options.indexOf("timed_out"), JobState.options.indexOf("failed")),
    );
  });

  it("filters by pool, type and node", () => {
    const bucket = new Bucket();
    bucket.put(1, { pool_id: "gpu", type: "python", node_id: NODE });
    bucket.put(2, { pool_id: "gpu", type: "shell", node_id: OTHER_NODE });
    bucket.put(3, { pool_id: "default", type: "python" });
    expect(list(bucket.index, { pool_id: "gpu" }).ids).toEqual(ids(2, 1));
    expect(list(bucket.index, { type: "python" }).ids).toEqual(ids(3, 1));
    expect(list(bucket.index, { node_id: NODE }).ids).toEqual(ids(1));
    expect(list(bucket.index, { pool_id: "gpu", type: "python" }).ids).toEqual(ids(1));
    expect(list(bucket.index, { pool_id: "nowhere" })).toEqual({ ids: [], more: false });
    expect(list(bucket.index, { node_id: "nod_XXXXXXXXXXXXXXXXXXXX" })).toEqual({ ids: [], more: false });
  });

  it("filters by labels: every `key=value` given must be carried with that value, an empty value included", () => {
    const bucket = new Bucket();
    bucket.put(1, { labels: { zone: "eu-1", gpu: "a100" } });
    bucket.put(2, { labels: { gpu: "a100", zone: "eu-1" } });
    bucket.put(3, { labels: { zone: "us-1" } });
    bucket.put(4, { labels: { zone: "" } });
    bucket.put(5);
    bucket.put(6, { labels: { city: "北京", zone: "cn-1" } });
    expect(list(bucket.index, { label: "zone=eu-1" }).ids).toEqual(ids(2, 1));
    expect(list(bucket.index, { label: "city=北京" }).ids).toEqual(ids(6));
    expect(list(bucket.index, { label: ["zone=eu-1", "gpu=a100"] }).ids).toEqual(ids(2, 1));
    expect(list(bucket.index, { label: ["zone=us-1", "gpu=a100"] }).ids).toEqual([]);
    expect(list(bucket.index, { label: "zone=" }).ids).toEqual(ids(4));
    expect(list(bucket.index, { label: "constructor=" }).ids).toEqual([]);
  });

  it("filters by creation time, strictly after and before, as instants", () => {
    const bucket = new Bucket();
    for (let n = 1; n <= 4; n += 1) bucket.put(n);
    const at = (n: number) => new Date(CREATED + n * 1000).toISOString();
    expect(list(bucket.index, { created_after: at(2) }).ids).toEqual(ids(4, 3));
    expect(list(bucket.index, { created_before: at(3) }).ids).toEqual(ids(2, 1));
    expect(list(bucket.index, { created_after: at(1), created_before: at(4) }).ids).toEqual(ids(3, 2));
    // Without milliseconds it is the same instant.
    expect(list(bucket.index, { created_after: at(2).replace(".000Z", "Z") }).ids).toEqual(ids(4, 3));
  });

  it("keeps the newest revision of a job: an older one arriving late changes nothing", () => {
    const bucket = new Bucket();
    bucket.put(1);
    const running = bucket.put(1, { state: "running", node_id: NODE });
    bucket.index.apply({
      key: `${APP}.${BUSINESS}.${idOf(1)}`,
      revision: running - 1,
      record: record(1),
      data: new Uint8Array(),
    });
    bucket.index.apply({
      key: `${APP}.${BUSINESS}.${idOf(1)}`,
      revision: running - 1,
      record: null,
      data: new Uint8Array(),
    });
    expect(list(bucket.index, { state: "running", node_id: NODE }).ids).toEqual(ids(1));
    expect(list(bucket.index, { state: "queued" }).ids).toEqual([]);

    bucket.put(1, { state: "succeeded", node_id: NODE });
    expect(list(bucket.index, { state: "running" }).ids).toEqual([]);
    expect(list(bucket.index, { state: "succeeded" }).ids).toEqual(ids(1));
  });

  it("forgets a job whose key is deleted or purged, and keeps the others in order", () => {
    const bucket = new Bucket();
    for (let n = 1; n <= 6; n += 1) bucket.put(n, { pool_id: n === 3 ? "only-three" : "default" });
    bucket.remove(3);
    bucket.remove(1);
    expect(list(bucket.index).ids).toEqual(ids(6, 5, 4, 2));
    expect(list(bucket.index, { pool_id: "only-three" }).ids).toEqual([]);
    expect(bucket.index.size(APP, BUSINESS)).toBe(4);
    bucket.put(7);
    expect(list(bucket.index).ids).toEqual(ids(7, 6, 5, 4, 2));
    for (const n of [2, 4, 5, 6, 7]) bucket.remove(n);
    expect(bucket.index.size(APP, BUSINESS)).toBe(0);
    expect(list(bucket.index)).toEqual({ ids: [], more: false });
  });

  it("forgets a job whose record is no longer one it can read", () => {
    const bucket = new Bucket();
    bucket.put(1);
    bucket.put(2);
    bucket.put(2, { state: "exploded" });
    expect(list(bucket.index).ids).toEqual(ids(1));
  });

  it("agrees with a plain sort and filter of every job after any mix of inserts, changes and removals", () => {
    const bucket = new Bucket();
    const model = new Map<number, string>();
    let seed = 42;
    const random = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % below;
    };
    const check = () => {
      for (const state of ["queued", "running"] as const) {
        const expected = [...model]
          .filter(([, s]) => s === state)
          .map(([n]) => n)
          .sort((a, b) => b - a);
        const cursorAt = random(50_000);
        expect(list(bucket.index, { state }, 100_000).ids).toEqual(ids(...expected));
        expect(list(bucket.index, { state, cursor: idOf(cursorAt) }, 7).ids).toEqual(
          ids(...expected.filter((n) => n < cursorAt).slice(0, 7)),
        );
      }
    };
    // Appends first, then changes and inserts anywhere (far back too), then appends again.
    for (let step = 0; step < 20_000; step += 1) {
      const n = step < 6000 ? step * 4 : step < 14_000 ? random(24_000) : 30_000 + step;
      const roll = random(10);
      if (roll < 2 && model.has(n)) {
        bucket.remove(n);
        model.delete(n);
      } else {
        const state = roll < 6 ? "queued" : "running";
        bucket.put(n, { state });
        model.set(n, state);
      }
      if (step % 2500 === 0) check();
    }
    check();
    expect(bucket.index.size(APP, BUSINESS)).toBe(model.size);
  });

  it("never mixes businesses: each lists only the jobs under its own app and business", () => {
    const bucket = new Bucket();
    bucket.put(1);
    bucket.put(2, {}, OTHER_BUSINESS);
    bucket.put(3, {}, BUSINESS, "app2");
    bucket.put(4);
    expect(list(bucket.index).ids).toEqual(ids(4, 1));
    expect(list(bucket.index, {}, 10, OTHER_BUSINESS).ids).toEqual(ids(2));
    expect(list(bucket.index, {}, 10, BUSINESS, "app2").ids).toEqual(ids(3));
    expect(list(bucket.index, {}, 10, OTHER_BUSINESS, "app2").ids).toEqual([]);
    // A filter that matches the other business's job finds nothing here.
    bucket.put(5, { pool_id: "theirs" }, OTHER_BUSINESS);
    expect(list(bucket.index, { pool_id: "theirs" }).ids).toEqual([]);
  });
});
