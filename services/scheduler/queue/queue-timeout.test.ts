import { describe, expect, it } from "vitest";
import { encodeJson } from "../../../shared/nats/index.js";
import type { JobRecord } from "../../../shared/records/index.js";
import { queuedJobRecord } from "../../../test/harness/job-records.js";
import { QueueDeadlines } from "./queue-timeout.js";

const CREATED = Date.parse("2026-03-01T00:00:00.000Z");

function revisionOf(key: string, revision: number, record: JobRecord | null) {
  return {
    key,
    revision,
    record: record as unknown as Record<string, unknown> | null,
    data: record ? encodeJson(record) : new Uint8Array(),
  };
}

describe("QueueDeadlines", () => {
  it("keeps a queued job with a queue timeout until its deadline, counted from its submit or its run_at", () => {
    const deadlines = new QueueDeadlines();
    deadlines.apply(revisionOf("a", 1, queuedJobRecord({ queue_timeout_seconds: 60 })));
    const runAt = new Date(CREATED + 600_000).toISOString();
    deadlines.apply(revisionOf("b", 2, queuedJobRecord({ queue_timeout_seconds: 60, run_at: runAt })));
    expect(deadlines.due(CREATED + 59_999)).toEqual([]);
    expect(deadlines.due(CREATED + 60_000)).toEqual(["a"]);
    expect(deadlines.due(CREATED + 660_000)).toEqual(["a", "b"]);
  });

  it("ignores jobs without a queue timeout", () => {
    const deadlines = new QueueDeadlines();
    deadlines.apply(revisionOf("a", 1, queuedJobRecord()));
    expect(deadlines.size).toBe(0);
  });

  it("drops a job once it leaves the queue, starts, or is deleted", () => {
    const deadlines = new QueueDeadlines();
    const queued = queuedJobRecord({ queue_timeout_seconds: 60 });
    deadlines.apply(revisionOf("a", 1, queued));
    deadlines.apply(revisionOf("b", 2, queued));
    deadlines.apply(revisionOf("c", 3, queued));
    deadlines.apply(revisionOf("a", 4, { ...queued, state: "assigned", pending_reason: null }));
    const started = {
      ...queued,
      timeline: [
        ...queued.timeline,
        { at: queued.created_at, state: "running" as const, attempt: 1, reason: "started", node_id: "n" },
      ],
    };
    deadlines.apply(revisionOf("b", 5, started));
    deadlines.apply(revisionOf("c", 6, null));
    expect(deadlines.size).toBe(0);
  });
});
