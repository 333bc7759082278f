import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { LogLine } from "../../shared/contract/index.js";
import { ApiError } from "../../shared/client/index.js";
import { BATCH_MAX_LINES, LogShipper } from "./log-shipper.js";
import type { NodePlane } from "./node-plane.js";

const logger = pino({ level: "silent" });

function lines(from: number, count: number): LogLine[] {
  return Array.from({ length: count }, (_, index) => ({
    seq: from + index,
    stream: "stdout" as const,
    line: `line ${from + index}`,
    ts: "2026-01-01T00:00:00.000Z",
  }));
}

/** A node plane whose log pushes fail while `failing` is set, recording every push it sees. */
function fakePlane() {
  const pushes: number[][] = [];
  const stored: number[] = [];
  const plane = {
    failing: 0,
    stale: false,
    pushes,
    stored,
    async pushLogs(request: Parameters<NodePlane["pushLogs"]>[0]) {
      pushes.push(request.lines.map((line) => line.seq));
      if (plane.stale) throw new ApiError({ code: "job.stale_attempt", message: "stale", status: 409 });
      if (plane.failing > 0) {
        plane.failing -= 1;
        throw new TypeError("fetch failed");
      }
      const highest = stored.at(-1) ?? 0;
      for (const line of request.lines) if (line.seq > highest) stored.push(line.seq);
      return { accepted: request.lines.length, duplicates: 0, dropped: 0 };
    },
  };
  return plane;
}

function shipper(plane: ReturnType<typeof fakePlane>, events: { acked: number[]; stale: number }) {
  return new LogShipper({
    jobId: "job_00000000000000000000",
    attempt: 1,
    plane: plane as unknown as Pick<NodePlane, "pushLogs">,
    logger,
    halt: new AbortController().signal,
    onAcknowledged: (seq) => events.acked.push(seq),
    onStale: () => (events.stale += 1),
  });
}

describe("LogShipper", () => {
  it("resends a failed batch with the same lines, so every line is stored once, in order", async () => {
    const plane = fakePlane();
    plane.failing = 2;
    const events = { acked: [] as number[], stale: 0 };
    const logs = shipper(plane, events);
    logs.enqueue(lines(1, 3));
    expect(await logs.close()).toBe("flushed");
    expect(plane.pushes).toEqual([
      [1, 2, 3],
      [1, 2, 3],
      [1, 2, 3],
    ]);
    expect(plane.stored).toEqual([1, 2, 3]);
    expect(events.acked).toEqual([3]);
  });

  it("sends a full batch at once, without waiting for the interval", async () => {
    const plane = fakePlane();
    const logs = shipper(plane, { acked: [], stale: 0 });
    logs.enqueue(lines(1, BATCH_MAX_LINES + 1));
    await expect.poll(() => plane.pushes.length, { timeout: 100, interval: 5 }).toBe(1);
    expect(plane.pushes[0]).toHaveLength(BATCH_MAX_LINES);
    await logs.close();
    expect(plane.stored).toEqual(lines(1, BATCH_MAX_LINES + 1).map((line) => line.seq));
  });

  it("sends a part batch within the interval", async () => {
    const plane = fakePlane();
    const logs = shipper(plane, { acked: [], stale: 0 });
    logs.enqueue(lines(1, 2));
    await expect.poll(() => plane.stored, { timeout: 1_000, interval: 10 }).toEqual([1, 2]);
    await logs.close();
  });

  it("drops what is pending once the attempt is not this node's", async () => {
    const plane = fakePlane();
    plane.stale = true;
    const events = { acked: [] as number[], stale: 0 };
    const logs = shipper(plane, events);
    logs.enqueue(lines(1, 5));
    expect(await logs.close()).toBe("stale");
    expect(events.stale).toBe(1);
    expect(plane.pushes).toHaveLength(1);
    logs.enqueue(lines(6, 1));
    expect(plane.pushes).toHaveLength(1);
  });
});
