import { describe, expect, it } from "vitest";
import { queuedJobRecord } from "../../../test/harness/job-records.js";
import type { JobState } from "../../../shared/contract/index.js";
import { JOB_PARTITIONS, JobRecord, jobIdOfKey } from "../../../shared/records/index.js";
import { JobListIndex } from "./job-list-index.js";
import { listJobs } from "./list-jobs.js";
import type { SchedulerContext } from "../scheduler-context.js";

const APP = "app1";
const BUSINESS = "biz_BBBBBBBBBBBBBBBBBBBB";
const CALLER = {
  app_id: APP,
  business_id: BUSINESS,
  user_id: "usr_UUUUUUUUUUUUUUUUUUUU",
  role: "admin",
  key_id: null,
  operator: false,
} as const;
const CREATED = Date.parse("2026-03-01T00:00:00.000Z");
const ALL_PARTITIONS = Array.from({ length: JOB_PARTITIONS }, (_, partition) => partition);

function idOf(n: number): string {
  return `job_${String(n).padStart(8, "0")}AAAAAAAAAAAA`;
}

function jobRecord(n: number, state: JobState): JobRecord {
  const at = new Date(CREATED + n * 1000).toISOString();
  return JobRecord.parse(
    queuedJobRecord({
      job_id: idOf(n),
      app_id: APP,
      business_id: BUSINESS,
      user_id: CALLER.user_id,
      env: { SECRET: "s3cret" },
      state,
      pending_reason: state === "queued" ? "waiting_for_scheduler" : null,
      created_at: at,
    }),
  );
}

/**
 * The bucket as the handler reads it, and the index as this replica's watch left it: the
 * two differ when a record changed after the watch delivered it. `caughtUp` delivers what
 * the test queued for the watch, as the real one waits for earlier writes.
 */
class Fixture {
  readonly index = new JobListIndex();
  readonly records = new Map<string, JobRecord>();
  readonly undelivered: Array<() => void> = [];
  reads = 0;
  #revision = 0;

  /** A write the watch has delivered. */
  write(n: number, state: JobState): void {
    this.#store(n, state);
    this.#deliver(n, state);
  }

  /** A write the watch has not delivered yet. */
  writeUnseen(n: number, state: JobState): void {
    this.#store(n, state);
    this.undelivered.push(() => this.#deliver(n, state));
  }

  /** A change after the watch delivered the record (it is on its way) or a delete. */
  changeBehindIndex(n: number, state: JobState | null): void {
    if (state === null) this.records.delete(idOf(n));
    else this.#store(n, state);
  }

  list(body: Record<string, unknown> = {}) {
    const ctx = {
      // No nodes: a queued job's pending reason reads `no_nodes_in_pool`.
      view: { nodeViews: () => [] },
      config: { CJS_SHARED_OPERATOR_POOLS: [] },
      clock: { now: () => 0 },
      // The one replica: it owns every partition.
      instance: "one",
      ownership: { holders: () => new Map([["one", ALL_PARTITIONS]]) },
      jobsWatch: {
        partitions: new Set(ALL_PARTITIONS),
        ready: true,
        caughtUp: async () => {
          this.undelivered.splice(0).forEach((deliver) => deliver());
          return true;
        },
      },
      store: {
        jobs: {
          get: async (key: string) => {
            this.reads += 1;
            const value = this.records.get(jobIdOfKey(key));
            return value ? { value, revision: 1 } : null;
          },
        },
      },
    } as unknown as SchedulerContext;
    return listJobs(ctx, this.index)({ caller: CALLER, body: { limit: 50, ...body } });
  }

  #store(n: number, state: JobState): void {
    this.records.set(idOf(n), jobRecord(n, state));
  }

  #deliver(n: number, state: JobState): void {
    this.#revision += 1;
    this.index.apply({
      key: `${APP}.${BUSINESS}.${idOf(n)}`,
      revision: this.#revision,
      record: jobRecord(n, state),
      data: new Uint8Array(),
    });
  }
}

/** The job id a `next_cursor` names (the cursor is that id bound to the listing). */
const positionOf = (cursor: string | null) =>
  cursor === null ? null : Buffer.from(cursor, "base64url").toString("utf8").split(".")[0];
const idsOf = (page: { items: Array<{ job_id: string }> }) => page.items.map((item) => item.job_id);

describe("jobs/list", () => {
  it("answers full records without env or timeline, newest first, with the cursor at the last job of a full page", async () => {
    const fixture = new Fixture();
    for (let n = 1; n <= 3; n += 1) fixture.write(n, "queued");
    const page = await fixture.list({ limit: 2 });
    expect(idsOf(page)).toEqual([idOf(3), idOf(2)]);
    expect(positionOf(page.next_cursor)).toBe(idOf(2));
    expect(page.items[0]).toMatchObject({ job_id: idOf(3), command: ["true"], state: "queued" });
    expect(page.items[0]).not.toHaveProperty("env");
    expect(page.items[0]).not.toHaveProperty("timeline");
    expect(page.items[0]).not.toHaveProperty("pool_key");
    const last = await fixture.list({ limit: 2, cursor: page.next_cursor });
    expect(idsOf(last)).toEqual([idOf(1)]);
    expect(last.next_cursor).toBeNull();
  });

  it("ends with a null cursor when no job after a full page matches the filter", async () => {
    const fixture = new Fixture();
    fixture.write(1, "queued");
    fixture.write(2, "failed");
    fixture.write(3, "failed");
    const page = await fixture.list({ state: "failed", limit: 2 });
    expect(idsOf(page)).toEqual([idOf(3), idOf(2)]);
    expect(page.next_cursor).toBeNull();
  });

  it("waits for the watch to deliver earlier writes, so a job just submitted elsewhere is listed", async () => {
    const fixture = new Fixture();
    fixture.write(1, "queued");
    fixture.writeUnseen(2, "queued");
    expect(idsOf(await fixture.list())).toEqual([idOf(2), idOf(1)]);
  });

  it("reads only the page's records, with a filter that matches nothing reading none", async () => {
    const fixture = new Fixture();
    for (let n = 1; n <= 100; n += 1) fixture.write(n, "queued");
    await fixture.list({ limit: 10 });
    expect(fixture.reads).toBe(10);
    expect(await fixture.list({ state: "running" })).toEqual({ items: [], next_cursor: null });
    expect(fixture.reads).toBe(10);
  });

  it("shows a record as it reads now, leaves out one that stopped matching or was deleted, and fills the page from the next", async () => {
    const fixture = new Fixture();
    for (let n = 1; n <= 6; n += 1) fixture.write(n, "queued");
    fixture.changeBehindIndex(6, "running");
    fixture.changeBehindIndex(5, null);
    fixture.changeBehindIndex(4, "cancelled");
    const filtered = await fixture.list({ state: "queued", limit: 2 });
    expect(idsOf(filtered)).toEqual([idOf(3), idOf(2)]);
    expect(positionOf(filtered.next_cursor)).toBe(idOf(2));
    // Unfiltered, a changed job is listed as it is now.
    const all = await fixture.list({ limit: 2 });
    expect(all.items.map((item) => [item.job_id, item.state])).toEqual([
      [idOf(6), "running"],
      [idOf(4), "cancelled"],
    ]);
  });

  it("stops reading after a bounded number of rounds when every candidate changed, with the cursor after the last job examined", async () => {
    const fixture = new Fixture();
    for (let n = 1; n <= 20; n += 1) fixture.write(n, "queued");
    for (let n = 1; n <= 20; n += 1) fixture.changeBehindIndex(n, "running");
    const page = await fixture.list({ state: "queued", limit: 2 });
    expect(page.items).toEqual([]);
    expect(positionOf(page.next_cursor)).toBe(idOf(13));
    expect(fixture.reads).toBe(8);
  });
});
