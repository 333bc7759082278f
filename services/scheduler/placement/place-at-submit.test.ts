import { describe, expect, it } from "vitest";
import { encodeJson } from "../../../shared/nats/index.js";
import { type JobRecord, jobKey, type NodeRecord, selfHostedPoolKey } from "../../../shared/records/index.js";
import { nodeRecord, queuedJobRecord } from "../../../test/harness/job-records.js";
import { QueuedJobs } from "../queue/queued-jobs.js";
import type { SchedulerStore } from "../scheduler-store.js";
import { ClusterView } from "./cluster-view.js";
import { OwnShare } from "./own-share.js";
import { nodeAtSubmit } from "./place-at-submit.js";

const BUSINESS = "biz_CCCCCCCCCCCCCCCCCCCC";
const POOL = selfHostedPoolKey(BUSINESS, "gpu");
const NOW = Date.parse("2026-11-28T12:00:00.000Z");

function node(nodeId: string, overrides: Partial<NodeRecord> = {}): NodeRecord {
  return nodeRecord({
    node_id: nodeId,
    business_id: BUSINESS,
    pool_id: "gpu",
    pool_key: POOL,
    capacity: { cpu: 8, memory_mb: 8192, gpu: 0, slots: 2 },
    ...overrides,
  });
}

function newJob(overrides: Partial<JobRecord> = {}): JobRecord {
  return queuedJobRecord({ business_id: BUSINESS, pool_id: "gpu", pool_key: POOL, ...overrides });
}

/** A replica's pictures: the nodes given, this replica alone holding partitions unless `holders` says otherwise. */
function replica(nodes: NodeRecord[], options: { holders?: string[]; ready?: boolean } = {}) {
  const view = new ClusterView({} as SchedulerStore, () => undefined);
  for (const record of nodes) view.nodes.set(record.node_id, { value: record, revision: 1 });
  const holders = new Map(
    (options.holders ?? ["me"]).map((instance, index): [string, number[]] => [instance, [index]]),
  );
  return {
    instance: "me",
    ownership: { owned: new Set<number>(), ownerOf: () => "me", holders: () => holders },
    ownShare: new OwnShare("me"),
    jobsWatch: { ready: options.ready ?? true },
    view,
    config: { CJS_SHARED_OPERATOR_POOLS: [] },
  } as unknown as Parameters<typeof nodeAtSubmit>[0];
}

describe("nodeAtSubmit", () => {
  it("chooses a node of the job's pool that takes it now, the one with the most free slots", () => {
    const ctx = replica([
      node("nod_small", { capacity: { cpu: 8, memory_mb: 8192, gpu: 0, slots: 1 } }),
      node("nod_big"),
    ]);
    expect(nodeAtSubmit(ctx, new QueuedJobs(), newJob(), NOW)?.node_id).toBe("nod_big");
  });

  it("chooses none outside the job's pool, or on a node that is draining, offline or without its type", () => {
    const ctx = replica([
      node("nod_other_pool", { pool_id: "cpu", pool_key: selfHostedPoolKey(BUSINESS, "cpu") }),
      node("nod_draining", { draining: true }),
      node("nod_offline", { offline_at: new Date(NOW).toISOString() }),
      node("nod_python", { job_types: ["python"] }),
    ]);
    expect(nodeAtSubmit(ctx, new QueuedJobs(), newJob(), NOW)).toBeNull();
  });

  it("chooses none for a job that waits for something: its run_at, its parents, a concurrency key", () => {
    const ctx = replica([node("nod_a")]);
    const at = new Date(NOW + 60_000).toISOString();
    for (const waiting of [
      newJob({ run_at: at, next_attempt_at: at }),
      newJob({ depends_on: ["job_0000000000000000000B"], waiting_on: ["job_0000000000000000000B"] }),
      newJob({ concurrency: { key: "deploy", max_running: 1 } }),
    ])
      expect(nodeAtSubmit(ctx, new QueuedJobs(), waiting, NOW)).toBeNull();
  });

  it("chooses none while a job of the pool waits in the queue, so the queue's order holds", () => {
    const ctx = replica([node("nod_a")]);
    const queue = new QueuedJobs();
    const waiting = newJob({ job_id: "job_0000000000000000000W" });
    const key = jobKey(waiting.app_id, BUSINESS, waiting.job_id);
    queue.apply({ key, revision: 1, record: waiting as unknown as Record<string, unknown>, data: encodeJson(waiting) });
    expect(queue.waitsIn(POOL)).toBe(true);
    expect(nodeAtSubmit(ctx, queue, newJob(), NOW)).toBeNull();
  });

  it("with another replica placing too, chooses this replica's own share of the nodes first, as its rounds do", () => {
    const nodes = Array.from({ length: 8 }, (_, index) => `nod_${index}`);
    const own = new OwnShare("me").among(["me", "other"]);
    expect(nodes.some(own) && !nodes.every(own)).toBe(true);
    // The others' nodes have more free slots: the most free slots alone would choose one of them.
    const records = nodes.map((nodeId) =>
      node(nodeId, { capacity: { cpu: 8, memory_mb: 8192, gpu: 0, slots: own(nodeId) ? 2 : 4 } }),
    );
    const chosen = nodeAtSubmit(replica(records, { holders: ["me", "other"] }), new QueuedJobs(), newJob(), NOW);
    expect(chosen && own(chosen.node_id)).toBe(true);
  });

  it("chooses none while this replica holds no partitions, or before its watch has read them", () => {
    expect(nodeAtSubmit(replica([node("nod_a")], { holders: ["other"] }), new QueuedJobs(), newJob(), NOW)).toBeNull();
    expect(nodeAtSubmit(replica([node("nod_a")], { ready: false }), new QueuedJobs(), newJob(), NOW)).toBeNull();
  });
});
