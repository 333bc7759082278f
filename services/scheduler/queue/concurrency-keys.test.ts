import { describe, expect, it } from "vitest";
import { scopePartition } from "../../../shared/records/index.js";
import { ActiveJobs } from "./active-jobs.js";
import { atConcurrencyLimit, concurrencyGate, type ConcurrencyUse } from "./concurrency-keys.js";
import type { JobRevision } from "../partitions/job-revision.js";
import { planPlacements, type NodeView } from "../placement/plan.js";
import type { PendingJob } from "./pending-job.js";
import { fairOrder, QueuedJobs } from "./queued-jobs.js";

const POOL = "op.default";

function node(id: string, slots = 4): NodeView {
  return {
    node_id: id,
    pool_key: POOL,
    labels: {},
    job_types: ["shell"],
    capacity: { cpu: 16, memory_mb: 65_536, gpu: 0, slots },
    used: { cpu: 0, memory_mb: 0, gpu: 0, slots: 0 },
    draining: false,
    online: true,
  };
}

let seq = 0;
function job(id: string, key?: string, maxRunning = 1, business = "biz_a"): PendingJob {
  seq += 1;
  return {
    job_key: `app1.${business}.${id}`,
    business_id: business,
    pool_key: POOL,
    type: "shell",
    labels: {},
    resources: { cpu: 1, memory_mb: 256, gpu: 0 },
    priority: 0,
    queued_at_ms: seq,
    concurrency:
      key === undefined
        ? null
        : concurrencyGate({ app_id: "app1", business_id: business, concurrency: { key, max_running: maxRunning } }),
  };
}

function placed(jobs: readonly PendingJob[], use?: ConcurrencyUse, nodes = [node("n1")]): string[] {
  return planPlacements(nodes, jobs, use).placements.map((placement) => placement.job_key.split(".")[2] as string);
}

function activeRevision(
  key: string,
  revision: number,
  state: string,
  concurrency: { key: string; max_running: number } | null,
): JobRevision {
  const record = {
    state,
    attempt: 1,
    node_id: "n1",
    updated_at: new Date(1000).toISOString(),
    app_id: "app1",
    business_id: "biz_a",
    pool_id: "default",
    pool_key: POOL,
    concurrency,
  };
  return { key, revision, record, data: new Uint8Array() };
}

describe("atConcurrencyLimit", () => {
  it("holds a job once its key has its own max_running in use, never a job without a key", () => {
    const gate = concurrencyGate({ app_id: "a", business_id: "b", concurrency: { key: "k", max_running: 2 } });
    expect(gate).toEqual({ scope: "a.b|k", max_running: 2, partition: scopePartition("a.b") });
    expect(atConcurrencyLimit(gate, 1)).toBe(false);
    expect(atConcurrencyLimit(gate, 2)).toBe(true);
    expect(atConcurrencyLimit(concurrencyGate({ app_id: "a", business_id: "b", concurrency: null }), 1000)).toBe(false);
  });
});

describe("planPlacements with concurrency keys", () => {
  it("places at most max_running jobs of a key in one round although the node has room for more", () => {
    expect(placed([job("k1", "deploy"), job("k2", "deploy"), job("k3", "deploy")])).toEqual(["k1"]);
    expect(placed([job("k1", "deploy", 2), job("k2", "deploy", 2), job("k3", "deploy", 2)])).toEqual(["k1", "k2"]);
  });

  it("counts the key's jobs already assigned or running", () => {
    const use: ConcurrencyUse = { inUse: (scope) => (scope === "app1.biz_a|deploy" ? 1 : 0) };
    const plan = planPlacements([node("n1")], [job("k1", "deploy", 2), job("k2", "deploy", 2), job("free")], use);
    expect(plan.placements.map((placement) => placement.job_key)).toEqual(["app1.biz_a.k1", "app1.biz_a.free"]);
    expect(plan.waiting).toBe(true);
  });

  it("lets a job of a held key not stop the jobs behind it, with or without a key", () => {
    expect(placed([job("a1", "a"), job("a2", "a"), job("b1", "b"), job("plain")])).toEqual(["a1", "b1", "plain"]);
  });

  it("counts a key within its business only", () => {
    expect(
      placed([job("x1", "same", 1, "biz_x"), job("y1", "same", 1, "biz_y"), job("x2", "same", 1, "biz_x")]),
    ).toEqual(["x1", "y1"]);
  });

  it("applies the oldest waiting job's own max_running, and keeps the key's younger jobs behind it", () => {
    // Two of the key are in use: a job allowing three goes; one allowing one waits, and the key's jobs after it too.
    const use: ConcurrencyUse = { inUse: () => 2 };
    expect(placed([job("loose", "k", 3), job("strict", "k", 1), job("after", "k", 3)], use)).toEqual(["loose"]);
    expect(placed([job("strict", "k", 1), job("loose", "k", 3)], use)).toEqual([]);
  });

  it("reads no further into a key's backlog once the key is at its limit", () => {
    const queue = QueuedJobs.fromList([
      ...Array.from({ length: 1000 }, (_, index) => job(`k${index}`, "deploy")),
      job("plain"),
    ]);
    const inOrder = queue.inOrder.bind(queue);
    let read = 0;
    queue.inOrder = function* (poolKey: string, closedKeys?: ReadonlySet<string>) {
      for (const each of inOrder(poolKey, closedKeys)) {
        read += 1;
        yield each;
      }
    };
    expect(planPlacements([node("n1")], queue).placements.map((placement) => placement.job_key)).toEqual([
      "app1.biz_a.k0",
      "app1.biz_a.plain",
    ]);
    expect(read).toBeLessThan(5);
  });
});

describe("QueuedJobs with concurrency keys", () => {
  it("lets a business's keys take turns, jobs without a key as one more group, each first come first served", () => {
    const order = fairOrder([
      job("a1", "a"),
      job("a2", "a"),
      job("a3", "a"),
      job("b1", "b"),
      job("b2", "b"),
      job("n1"),
      job("a4", "a"),
    ]);
    expect(order.map((each) => each.job_key.split(".")[2])).toEqual(["a1", "b1", "n1", "a2", "b2", "a3", "a4"]);
  });

  it("carries the keys' turns over from round to round", () => {
    const queue = QueuedJobs.fromList([job("a1", "a", 5), job("a2", "a", 5), job("b1", "b", 5), job("b2", "b", 5)]);
    const first = planPlacements([node("n1", 1)], queue);
    expect(first.placements.map((placement) => placement.job_key)).toEqual(["app1.biz_a.a1"]);
    // As the placer does once the placement landed.
    queue.markServed(queue.get("app1.biz_a.a1")!);
    queue.remove("app1.biz_a.a1");
    const second = planPlacements([node("n1", 1)], queue);
    expect(second.placements.map((placement) => placement.job_key)).toEqual(["app1.biz_a.b1"]);
  });
});

describe("ActiveJobs per concurrency key", () => {
  it("counts assigned and running jobs per key and tells when a keyed job stops being active", () => {
    let freed = 0;
    const active = new ActiveJobs([], () => (freed += 1));
    const deploy = { key: "deploy", max_running: 1 };
    active.apply(activeRevision("app1.biz_a.j1", 1, "assigned", deploy));
    active.apply(activeRevision("app1.biz_a.j2", 2, "running", deploy));
    active.apply(activeRevision("app1.biz_a.j3", 3, "running", null));
    expect(active.inUse("app1.biz_a|deploy")).toBe(2);
    active.apply(activeRevision("app1.biz_a.j1", 4, "running", deploy));
    expect(active.inUse("app1.biz_a|deploy")).toBe(2);
    active.apply(activeRevision("app1.biz_a.j1", 5, "succeeded", deploy));
    expect(active.inUse("app1.biz_a|deploy")).toBe(1);
    expect(freed).toBe(1);
    active.apply(activeRevision("app1.biz_a.j3", 6, "succeeded", null));
    expect(freed).toBe(1);
  });

  it("counts an assignment once when the same revision comes twice (the replica's own write, then its echo)", () => {
    const active = new ActiveJobs();
    const assigned = activeRevision("app1.biz_a.j1", 7, "assigned", { key: "deploy", max_running: 1 });
    active.apply(assigned);
    expect(active.inUse("app1.biz_a|deploy")).toBe(1);
    active.apply(assigned);
    expect(active.inUse("app1.biz_a|deploy")).toBe(1);
  });
});
