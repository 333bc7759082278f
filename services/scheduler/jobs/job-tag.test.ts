import { describe, expect, it } from "vitest";
import { jobKey, jobPartition } from "../../../shared/records/index.js";
import { newJobId } from "../../../shared/runtime/index.js";
import type { SchedulerConfig } from "../config.js";
import { concurrencyGate } from "../queue/concurrency-keys.js";
import { taggedJobId } from "./job-tag.js";

const ctx = { config: { CJS_OPERATOR_POOLS: ["default"] } as unknown as SchedulerConfig };
const caller = { app_id: "app1", business_id: "biz_CCCCCCCCCCCCCCCCCCCC" };
const plain = { pool_id: "default", concurrency: undefined };

describe("the id a new job is made under", () => {
  it("falls in one of the replica's own partitions, spread over them", () => {
    const own = [3, 17, 29];
    const partitions = Array.from({ length: 300 }, () =>
      jobPartition(taggedJobId(ctx, caller, plain, newJobId(Date.now()), own)),
    );
    expect(new Set(partitions)).toEqual(new Set(own));
  });

  it("with a concurrency key: in its key's partition, whatever the replica owns", () => {
    const concurrency = { key: "deploy", max_running: 1 };
    const jobId = taggedJobId(ctx, caller, { pool_id: "default", concurrency }, newJobId(Date.now()), [3]);
    expect(jobPartition(jobId)).toBe(concurrencyGate({ ...caller, concurrency })?.partition);
  });

  it("chosen elsewhere (an idempotent request's, a schedule tick's): tagged the same every time", () => {
    const chosen = newJobId(Date.now());
    const first = taggedJobId(ctx, caller, plain, chosen);
    expect(taggedJobId(ctx, caller, plain, first)).toBe(first);
    expect(taggedJobId(ctx, caller, plain, chosen)).toBe(first);
    // Tagged as an operator pool's job: its key says so.
    expect(jobKey(caller.app_id, caller.business_id, first)).toMatch(/^o\d\d\./);
  });
});
