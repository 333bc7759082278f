import { describe, expect, it } from "vitest";
import type { NodeView } from "./placement/plan.js";
import { mergeSnapshots, type Series, takeSnapshot } from "./scheduler-snapshot.js";

const NOW = Date.parse("2026-11-23T12:00:00.000Z");
const OP = "op.acme.default";

function node(overrides: Partial<NodeView>): NodeView {
  return {
    node_id: "nod_1",
    pool_key: OP,
    labels: {},
    job_types: [],
    capacity: { cpu: 4, memory_mb: 4096, gpu: 0, slots: 4 },
    used: { cpu: 0, memory_mb: 0, gpu: 0, slots: 0 },
    draining: false,
    online: true,
    ...overrides,
  };
}

function valueOf(series: Series, labels: Record<string, string>): number | undefined {
  return [...series.values()].find((entry) => JSON.stringify(entry.labels) === JSON.stringify(labels))?.value;
}

describe("scheduler snapshot", () => {
  it("counts jobs by state and pool, with the oldest queued wait and the oldest assignment", () => {
    const snapshot = takeSnapshot({
      queued: [
        { pool_key: OP, queued_at_ms: NOW - 30_000 },
        { pool_key: OP, queued_at_ms: NOW - 5_000 },
      ],
      active: [
        { state: "assigned", pool_key: OP, updated_ms: NOW - 120_000, deadline_ms: null },
        { state: "assigned", pool_key: OP, updated_ms: NOW - 1_000, deadline_ms: null },
        { state: "running", pool_key: OP, updated_ms: NOW - 60_000, deadline_ms: NOW - 1 },
        { state: "running", pool_key: OP, updated_ms: NOW - 60_000, deadline_ms: NOW + 60_000 },
      ],
      nodes: [],
      nowMs: NOW,
    });
    expect(valueOf(snapshot.jobs, { state: "queued", pool: OP })).toBe(2);
    expect(valueOf(snapshot.jobs, { state: "assigned", pool: OP })).toBe(2);
    expect(valueOf(snapshot.jobs, { state: "running", pool: OP })).toBe(2);
    expect(valueOf(snapshot.oldestAgeSeconds, { state: "queued", pool: OP })).toBe(30);
    expect(valueOf(snapshot.oldestAgeSeconds, { state: "assigned", pool: OP })).toBe(120);
    expect(valueOf(snapshot.pastDeadline, { pool: OP })).toBe(1);
  });

  it("labels every self-hosted pool as self_hosted, so no business id reaches a metric", () => {
    const snapshot = takeSnapshot({
      queued: [
        { pool_key: "sh.biz_a.default", queued_at_ms: NOW },
        { pool_key: "sh.biz_b.gpu", queued_at_ms: NOW },
      ],
      active: [],
      nodes: [node({ pool_key: "sh.biz_a.default" })],
      nowMs: NOW,
    });
    expect(valueOf(snapshot.jobs, { state: "queued", pool: "self_hosted" })).toBe(2);
    const labels = [snapshot.jobs, snapshot.poolNodes, snapshot.poolSlots, snapshot.oldestAgeSeconds].flatMap(
      (series) => [...series.values()].map((entry) => entry.labels.pool),
    );
    expect(new Set(labels)).toEqual(new Set(["self_hosted"]));
  });

  it("reports nodes by state and slots used and free, free only on nodes that take jobs, and zeros for a pool whose nodes are all gone", () => {
    const snapshot = takeSnapshot({
      queued: [],
      active: [],
      nodes: [
        node({ node_id: "a", used: { cpu: 1, memory_mb: 0, gpu: 0, slots: 1 } }),
        node({ node_id: "b", draining: true, used: { cpu: 1, memory_mb: 0, gpu: 0, slots: 2 } }),
        node({ node_id: "c", online: false }),
      ],
      nowMs: NOW,
    });
    expect(valueOf(snapshot.poolNodes, { pool: OP, state: "online" })).toBe(1);
    expect(valueOf(snapshot.poolNodes, { pool: OP, state: "draining" })).toBe(1);
    expect(valueOf(snapshot.poolNodes, { pool: OP, state: "offline" })).toBe(1);
    expect(valueOf(snapshot.poolSlots, { pool: OP, use: "used" })).toBe(3);
    expect(valueOf(snapshot.poolSlots, { pool: OP, use: "free" })).toBe(3);
    expect(valueOf(snapshot.jobs, { state: "queued", pool: OP })).toBe(0);

    const offline = takeSnapshot({ queued: [], active: [], nodes: [node({ online: false })], nowMs: NOW });
    expect(valueOf(offline.poolNodes, { pool: OP, state: "online" })).toBe(0);
  });

  it("merges the replicas of one process: their own partitions' jobs added up, the oldest age the highest", () => {
    const one = takeSnapshot({ queued: [{ pool_key: OP, queued_at_ms: NOW }], active: [], nodes: [], nowMs: NOW });
    const two = takeSnapshot({
      queued: [
        { pool_key: OP, queued_at_ms: NOW },
        { pool_key: OP, queued_at_ms: NOW },
      ],
      active: [],
      nodes: [],
      nowMs: NOW,
    });
    const merged = mergeSnapshots([one, two]);
    expect(valueOf(merged.jobs, { state: "queued", pool: OP })).toBe(3);
    expect(valueOf(merged.oldestAgeSeconds, { state: "queued", pool: OP })).toBe(0);
  });
});
