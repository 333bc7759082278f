import { describe, expect, it } from "vitest";
import { type CpuProfile, summariseProfile } from "./cpu-profile.js";

const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0, columnNumber: 0 });
const ROOT = "file:///repo";

/** root → (idle); root → nats parse → our take → zod parse; root → our decodeJson → JSON.parse; root → GC. */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame("(root)", ""), children: [2, 3, 6, 8] },
    { id: 2, callFrame: frame("(idle)", "") },
    { id: 3, callFrame: frame("parse", `${ROOT}/node_modules/@nats-io/nats-core/lib/parser.js`), children: [4] },
    { id: 4, callFrame: frame("take", `${ROOT}/services/scheduler/queue-consumer.ts`), children: [5] },
    { id: 5, callFrame: frame("safeParse", `${ROOT}/node_modules/zod/v4/classic/schemas.js`) },
    { id: 6, callFrame: frame("decodeJson", `${ROOT}/shared/nats/rpc.ts`), children: [7] },
    { id: 7, callFrame: frame("parse", "") },
    { id: 8, callFrame: frame("(garbage collector)", "") },
  ],
  startTime: 1_000_000,
  endTime: 1_010_000,
  // One sample a millisecond from 1001 ms on.
  samples: [2, 5, 5, 4, 7, 8, 3, 2, 5, 5],
  timeDeltas: Array.from({ length: 10 }, () => 1000),
};

describe("the CPU profile summary", () => {
  it("keeps the samples inside the windows and puts each busy one in the bucket of its innermost telling frame", () => {
    const summary = summariseProfile(profile, [{ startMs: 1001, endMs: 1008 }]);
    expect(summary.samples).toBe(7);
    expect(summary.busy).toBe(6);
    expect(Object.fromEntries(summary.buckets)).toEqual({
      "zod validation": 2,
      "ours: services/scheduler/queue-consumer.ts": 1,
      "JSON encode/decode": 1,
      GC: 1,
      "NATS client: protocol parsing and dispatch": 1,
    });
  });

  it("counts a file of ours inclusively and names it as the code that asked for the work", () => {
    const summary = summariseProfile(profile, [{ startMs: 0, endMs: Number.POSITIVE_INFINITY }]);
    expect(summary.ourFiles.get("services/scheduler/queue-consumer.ts")).toBe(5);
    expect(Object.fromEntries(summary.owners.get("services/scheduler/queue-consumer.ts")!)).toEqual({
      "zod validation": 4,
      "ours: services/scheduler/queue-consumer.ts": 1,
    });
  });
});
