import { describe, expect, it } from "vitest";
import type { PendingJob } from "../queue/pending-job.js";
import { nodesTakingNow, pendingReason, planPlacements, type NodeView } from "./plan.js";
import { fairOrder, QueuedJobs } from "../queue/queued-jobs.js";
import { concurrencyGate } from "../queue/concurrency-keys.js";

function node(id: string, overrides: Partial<NodeView> = {}): NodeView {
  return {
    node_id: id,
    pool_key: "op.default",
    labels: {},
    job_types: ["shell"],
    capacity: { cpu: 4, memory_mb: 8192, gpu: 0, slots: 2 },
    used: { cpu: 0, memory_mb: 0, gpu: 0, slots: 0 },
    draining: false,
    online: true,
    ...overrides,
  };
}

let seq = 0;
function job(id: string, overrides: Partial<PendingJob> = {}): PendingJob {
  seq += 1;
  return {
    job_key: id,
    business_id: "biz_a",
    pool_key: "op.default",
    type: "shell",
    labels: {},
    resources: { cpu: 1, memory_mb: 512, gpu: 0 },
    priority: 0,
    queued_at_ms: seq,
    ...overrides,
  };
}

describe("planPlacements", () => {
  it("places a job on a live node of its pool with room", () => {
    const plan = planPlacements([node("n1")], [job("j1")]);
    expect(plan.placements).toEqual([{ job_key: "j1", node_id: "n1" }]);
    expect(plan.waiting).toBe(false);
  });

  it("fills this replica's own share of the nodes first, then the others', most free first", () => {
    const nodes = [node("mine", { capacity: { cpu: 8, memory_mb: 8192, gpu: 0, slots: 2 } }), node("theirs")];
    const plan = planPlacements(nodes, [job("j1"), job("j2"), job("j3")], undefined, (id) => id === "mine");
    expect(plan.placements).toEqual([
      { job_key: "j1", node_id: "mine" },
      { job_key: "j2", node_id: "mine" },
      { job_key: "j3", node_id: "theirs" },
    ]);
  });

  it("leaves out a job another placement of the replica is writing, and plans the next in its place", () => {
    const queued = QueuedJobs.fromList([job("j1"), job("j2"), job("j3")]);
    expect(queued.startPlacing("j1")).toBe(true);
    expect(queued.startPlacing("j1")).toBe(false);
    expect(planPlacements([node("n1")], queued).placements.map((placement) => placement.job_key)).toEqual(["j2", "j3"]);
    queued.endPlacing("j1");
    expect(planPlacements([node("n1")], queued).placements.map((placement) => placement.job_key)).toEqual(["j1", "j2"]);
  });

  it("counts a job being placed against its concurrency key, so the key's next job waits", () => {
    const gate = concurrencyGate({
      app_id: "app1",
      business_id: "biz_a",
      concurrency: { key: "deploy", max_running: 1 },
    });
    const queued = QueuedJobs.fromList([job("j1", { concurrency: gate }), job("j2", { concurrency: gate }), job("j3")]);
    queued.startPlacing("j1");
    const plan = planPlacements([node("n1")], queued);
    expect(plan.placements.map((placement) => placement.job_key)).toEqual(["j3"]);
    expect(plan.waiting).toBe(true);
  });

  it("never places more jobs on a node than its slots", () => {
    const plan = planPlacements([node("n1")], [job("j1"), job("j2"), job("j3")]);
    expect(plan.placements).toHaveLength(2);
    expect(plan.waiting).toBe(true);
  });

  it("counts what is already used on a node", () => {
    const busy = node("n1", { used: { cpu: 4, memory_mb: 0, gpu: 0, slots: 1 } });
    expect(planPlacements([busy], [job("j1")])).toEqual({ placements: [], waiting: true });
  });

  it("reads only as far into a backlog as the pool has room", () => {
    const queue = QueuedJobs.fromList(Array.from({ length: 1000 }, (_, index) => job(`j${index}`)));
    const inOrder = queue.inOrder.bind(queue);
    let read = 0;
    queue.inOrder = function* (poolKey: string) {
      for (const each of inOrder(poolKey)) {
        read += 1;
        yield each;
      }
    };
    const plan = planPlacements([node("n1")], queue);
    expect(plan).toEqual({
      placements: [
        { job_key: "j0", node_id: "n1" },
        { job_key: "j1", node_id: "n1" },
      ],
      waiting: true,
    });
    expect(read).toBe(3);
  });

  it.each<[string, NodeView[], Partial<PendingJob>, string]>([
    ["no node in the pool", [node("n1", { pool_key: "sh.biz_a.mine" })], {}, "no_nodes_in_pool"],
    ["an offline node only", [node("n1", { online: false })], {}, "no_nodes_in_pool"],
    ["no node with the type", [node("n1", { job_types: ["docker"] })], {}, "no_node_with_type"],
    [
      "no node with the labels",
      [node("n1", { labels: { gpu: "t4" } })],
      { labels: { gpu: "a100" } },
      "no_node_with_labels",
    ],
    ["no node big enough", [node("n1")], { resources: { cpu: 64, memory_mb: 512, gpu: 0 } }, "no_node_with_resources"],
    ["only draining nodes", [node("n1", { draining: true })], {}, "all_nodes_draining"],
    [
      "a node that is full",
      [node("n1", { used: { cpu: 2, memory_mb: 1024, gpu: 0, slots: 2 } })],
      {},
      "all_nodes_busy",
    ],
    ["a node with room", [node("n1")], {}, "waiting_for_scheduler"],
  ])("says why a job waits: %s", (_case, nodes, overrides, reason) => {
    expect(pendingReason(job("j1", overrides), nodes)).toBe(reason);
    if (reason !== "waiting_for_scheduler")
      expect(planPlacements(nodes, [job("j1", overrides)])).toEqual({ placements: [], waiting: true });
  });

  it("requires every label of the job, with the same value", () => {
    const plan = planPlacements(
      [node("n1", { labels: { gpu: "a100", zone: "eu" } })],
      [job("j1", { labels: { gpu: "a100" } })],
    );
    expect(plan.placements).toHaveLength(1);
  });

  it("spreads jobs over nodes with the most free slots", () => {
    const plan = planPlacements([node("n1"), node("n2")], [job("j1"), job("j2")]);
    expect(new Set(plan.placements.map((placement) => placement.node_id))).toEqual(new Set(["n1", "n2"]));
  });

  it("places higher priority first when capacity is short", () => {
    const plan = planPlacements(
      [node("n1", { capacity: { cpu: 4, memory_mb: 8192, gpu: 0, slots: 1 } })],
      [job("low"), job("high", { priority: 5 })],
    );
    expect(plan.placements).toEqual([{ job_key: "high", node_id: "n1" }]);
  });

  it("gives a business with one job a turn before another business's backlog", () => {
    const backlog = Array.from({ length: 10_000 }, (_, index) => job(`a${index}`, { business_id: "biz_a" }));
    const single = job("b0", { business_id: "biz_b" });
    const plan = planPlacements(
      [node("n1", { capacity: { cpu: 64, memory_mb: 65536, gpu: 0, slots: 2 } })],
      [...backlog, single],
    );
    expect(plan.placements.map((placement) => placement.job_key)).toEqual(["a0", "b0"]);
  });
});

describe("planPlacements with a node's hourly cap", () => {
  it("never places more jobs on a node than its assignments left this hour", () => {
    const plan = planPlacements(
      [node("n1", { capacity: { cpu: 8, memory_mb: 8192, gpu: 0, slots: 8 }, per_hour: { limit: 3, used: 1 } })],
      [job("j1"), job("j2"), job("j3")],
    );
    expect(plan.placements.map((placement) => placement.job_key)).toEqual(["j1", "j2"]);
    expect(
      pendingReason(job("j3"), [
        node("n1", { capacity: { cpu: 8, memory_mb: 8192, gpu: 0, slots: 8 }, per_hour: { limit: 3, used: 3 } }),
      ]),
    ).toBe("all_nodes_at_hourly_quota");
  });

  it("places on an uncapped node of the pool instead", () => {
    const plan = planPlacements(
      [
        node("capped", { per_hour: { limit: 1, used: 1 } }),
        node("free", { capacity: { cpu: 4, memory_mb: 8192, gpu: 0, slots: 1 } }),
      ],
      [job("j1")],
    );
    expect(plan.placements).toEqual([{ job_key: "j1", node_id: "free" }]);
  });

  it("says all_nodes_busy when some node that fits is merely full", () => {
    const busy = node("busy", { used: { cpu: 2, memory_mb: 1024, gpu: 0, slots: 2 } });
    expect(pendingReason(job("j1"), [busy, node("capped", { per_hour: { limit: 2, used: 2 } })])).toBe(
      "all_nodes_busy",
    );
  });

  it("leaves the caller's snapshot as it was", () => {
    const capped = node("n1", { per_hour: { limit: 5, used: 0 } });
    planPlacements([capped], [job("j1")]);
    expect(capped.per_hour).toEqual({ limit: 5, used: 0 });
  });
});

describe("nodesTakingNow", () => {
  it("lists the pool's nodes that placement could pick now, the one it would pick first first", () => {
    const nodes = [
      node("one-free", { used: { cpu: 1, memory_mb: 512, gpu: 0, slots: 1 } }),
      node("two-free"),
      node("other-pool", { pool_key: "op.other" }),
      node("full", { used: { cpu: 2, memory_mb: 1024, gpu: 0, slots: 2 } }),
      node("draining", { draining: true }),
      node("offline", { online: false }),
      node("no-type", { job_types: ["python"] }),
      node("capped", { per_hour: { limit: 1, used: 1 } }),
    ];
    expect(nodesTakingNow(job("j"), nodes).map((taking) => taking.node_id)).toEqual(["two-free", "one-free"]);
    expect(planPlacements(nodes, [job("j")]).placements).toEqual([{ job_key: "j", node_id: "two-free" }]);
    expect(nodesTakingNow(job("j", { labels: { zone: "eu" } }), nodes)).toEqual([]);
  });
});

describe("fairOrder", () => {
  it("alternates businesses within a priority and keeps each business FIFO", () => {
    const jobs = [
      job("a1"),
      job("a2"),
      job("a3"),
      job("b1", { business_id: "biz_b" }),
      job("b2", { business_id: "biz_b" }),
    ];
    expect(fairOrder(jobs).map((each) => each.job_key)).toEqual(["a1", "b1", "a2", "b2", "a3"]);
  });
});
