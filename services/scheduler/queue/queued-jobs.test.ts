import { describe, expect, it } from "vitest";
import { encodeJson } from "../../../shared/nats/index.js";
import type { JobRevision } from "../partitions/job-revision.js";
import { QueuedJobs } from "./queued-jobs.js";

const POOL = "op.app1.default";

function revision(key: string, rev: number, fields: Record<string, unknown> | null): JobRevision {
  const record =
    fields === null
      ? null
      : {
          state: "queued",
          attempt: 0,
          app_id: "app1",
          business_id: "biz_a",
          pool_id: "default",
          pool_key: POOL,
          type: "shell",
          labels: {},
          resources: { cpu: 1, memory_mb: 256, gpu: 0 },
          priority: 0,
          queued_at: new Date(1_000 + rev).toISOString(),
          pending_reason: "waiting_for_scheduler",
          ...fields,
        };
  return { key, revision: rev, record, data: record ? encodeJson(record) : new Uint8Array() };
}

function order(queue: QueuedJobs): string[] {
  return [...queue.inOrder(POOL)].map((job) => job.job_key);
}

describe("QueuedJobs", () => {
  it("keeps a queued revision and drops the job when a later revision leaves the queue", () => {
    const queue = new QueuedJobs();
    queue.apply(revision("a.b.j1", 1, {}));
    expect(queue.get("a.b.j1")).toMatchObject({ revision: 1, attempt: 0 });
    queue.apply(revision("a.b.j1", 2, { state: "assigned", attempt: 1, pending_reason: null }));
    expect(queue.size).toBe(0);
    expect(order(queue)).toEqual([]);
  });

  it("ignores a revision older than the one it holds", () => {
    const queue = new QueuedJobs();
    queue.apply(revision("a.b.j1", 5, { attempt: 2 }));
    queue.apply(revision("a.b.j1", 3, { state: "running", attempt: 1, pending_reason: null }));
    expect(queue.get("a.b.j1")).toMatchObject({ revision: 5, attempt: 2 });
  });

  it("drops a deleted job, and keeps a newer queued revision when an older one is removed", () => {
    const queue = new QueuedJobs();
    queue.apply(revision("a.b.j1", 1, {}));
    queue.apply(revision("a.b.j1", 2, null));
    expect(queue.size).toBe(0);
    queue.apply(revision("a.b.j2", 3, {}));
    queue.apply(revision("a.b.j2", 4, { queued_at: new Date(9_000).toISOString(), attempt: 1 }));
    queue.remove("a.b.j2", 3);
    expect(queue.get("a.b.j2")).toMatchObject({ revision: 4 });
  });

  it("orders by priority, then businesses in turns, each business first come first served", () => {
    const queue = new QueuedJobs();
    queue.apply(revision("a.x.a1", 1, { business_id: "biz_a" }));
    queue.apply(revision("a.x.a2", 2, { business_id: "biz_a" }));
    queue.apply(revision("a.y.b1", 3, { business_id: "biz_b" }));
    queue.apply(revision("a.x.a3", 4, { business_id: "biz_a", priority: 5 }));
    expect(order(queue)).toEqual(["a.x.a3", "a.x.a1", "a.y.b1", "a.x.a2"]);
  });

  it("carries the turns over from round to round: the business given a place last waits for the others", () => {
    const queue = new QueuedJobs();
    for (let index = 1; index <= 5; index += 1) queue.apply(revision(`a.x.a${index}`, index, { business_id: "biz_a" }));
    queue.apply(revision("a.y.b1", 6, { business_id: "biz_b" }));
    const first = order(queue)[0] as string;
    expect(first).toBe("a.x.a1");
    queue.markServed({ pool_key: POOL, business_id: "biz_a", priority: 0 });
    queue.remove(first);
    expect(order(queue)[0]).toBe("a.y.b1");
  });

  it("a job requeued goes to the back of its business's queue", () => {
    const queue = new QueuedJobs();
    queue.apply(revision("a.x.j1", 1, {}));
    queue.apply(revision("a.x.j2", 2, {}));
    queue.apply(revision("a.x.j1", 3, { attempt: 1, queued_at: new Date(50_000).toISOString() }));
    expect(order(queue)).toEqual(["a.x.j2", "a.x.j1"]);
  });

  it("tells of every job that joins the queue", () => {
    let told = 0;
    const queue = new QueuedJobs(() => {
      told += 1;
    });
    queue.apply(revision("a.x.j1", 1, {}));
    queue.apply(revision("a.x.j1", 2, { state: "assigned", attempt: 1, pending_reason: null }));
    expect(told).toBe(1);
  });

  it("queues a job stored with the older operator key `op.<pool>` in its application's pool, or in the shared pool when the pool is shared", () => {
    const scoped = new QueuedJobs();
    scoped.apply(revision("a.x.j1", 1, { pool_key: "op.default" }));
    expect([...scoped.pools()]).toEqual([POOL]);
    const shared = new QueuedJobs(() => undefined, ["default"]);
    shared.apply(revision("a.x.j1", 1, { pool_key: "op.default" }));
    expect([...shared.pools()]).toEqual(["op.*.default"]);
  });
});

describe("QueuedJobs: the records kept for assignments", () => {
  it("keeps a revision's bytes, and the record itself only when this replica wrote it", () => {
    const queue = new QueuedJobs();
    const fromWatch = revision("a.b.j1", 1, {});
    const written = { ...revision("a.b.j2", 2, {}), own: true as const };
    queue.apply(fromWatch);
    queue.apply(written);
    expect(queue.recordOf("a.b.j1", 1)).toEqual({ revision: 1, data: fromWatch.data });
    expect(queue.recordOf("a.b.j2", 2)?.written).toBe(written.record);
    expect(queue.recordOf("a.b.j2", 1)).toBeUndefined();
  });

  it("forgets the written record when a later revision of the job comes from elsewhere", () => {
    const queue = new QueuedJobs();
    queue.apply({ ...revision("a.b.j1", 1, {}), own: true });
    queue.apply(revision("a.b.j1", 2, { attempt: 1 }));
    expect(queue.recordOf("a.b.j1", 2)?.written).toBeUndefined();
    expect(queue.recordOf("a.b.j1", 1)).toBeUndefined();
  });

  it("keeps at most 5000 written records at once, and makes room as jobs leave the queue", () => {
    const queue = new QueuedJobs();
    for (let index = 1; index <= 5001; index += 1) queue.apply({ ...revision(`a.b.j${index}`, index, {}), own: true });
    expect(queue.recordOf("a.b.j5000", 5000)?.written).toBeDefined();
    expect(queue.recordOf("a.b.j5001", 5001)).toMatchObject({ revision: 5001 });
    expect(queue.recordOf("a.b.j5001", 5001)?.written).toBeUndefined();
    queue.apply(revision("a.b.j1", 6000, { state: "assigned", attempt: 1, pending_reason: null }));
    queue.apply({ ...revision("a.b.j6001", 6001, {}), own: true });
    expect(queue.recordOf("a.b.j6001", 6001)?.written).toBeDefined();
  });
});

describe("QueuedJobs: jobs held until a time (run_at, retry backoff)", () => {
  const at = (ms: number) => new Date(ms).toISOString();

  it("keeps a job out of its pool until its time, then releases it; nextDueAt names the earliest", () => {
    let now = 10_000;
    const queue = new QueuedJobs(undefined, [], () => now);
    queue.apply(revision("a.b.late", 1, { next_attempt_at: at(30_000), pending_reason: "scheduled" }));
    queue.apply(revision("a.b.soon", 2, { next_attempt_at: at(20_000), pending_reason: "retry_backoff" }));
    queue.apply(revision("a.b.now", 3, {}));
    expect(order(queue)).toEqual(["a.b.now"]);
    expect(queue.size).toBe(3);
    expect(queue.nextDueAt()).toBe(20_000);

    expect(queue.releaseDue(19_999)).toBe(0);
    now = 20_000;
    expect(queue.releaseDue(now)).toBe(1);
    expect(order(queue)).toEqual(["a.b.now", "a.b.soon"]);
    expect(queue.nextDueAt()).toBe(30_000);
  });

  it("a held job that leaves the queue is never released, and the next due time moves on past it", () => {
    const queue = new QueuedJobs(undefined, [], () => 0);
    queue.apply(revision("a.b.cancelled", 1, { next_attempt_at: at(5_000), pending_reason: "scheduled" }));
    queue.apply(revision("a.b.later", 2, { next_attempt_at: at(9_000), pending_reason: "scheduled" }));
    queue.apply(revision("a.b.cancelled", 3, { state: "cancelled", pending_reason: null }));
    expect(queue.size).toBe(1);

    expect(queue.releaseDue(6_000)).toBe(0);
    expect(queue.nextDueAt()).toBe(9_000);
    expect(queue.releaseDue(9_000)).toBe(1);
    expect(order(queue)).toEqual(["a.b.later"]);
    expect(queue.nextDueAt()).toBeNull();
  });

  it("a job waiting for dependencies stays out of the queue until a revision without them", () => {
    const queue = new QueuedJobs(undefined, [], () => 0);
    queue.apply(revision("a.b.child", 1, { waiting_on: ["job_x"], pending_reason: "waiting_for_dependencies" }));
    expect(queue.size).toBe(0);
    queue.apply(revision("a.b.child", 2, { waiting_on: [] }));
    expect(order(queue)).toEqual(["a.b.child"]);
  });
});
