import { describe, expect, it } from "vitest";
import { type AllocationRecord, allocationUse } from "./allocation-record.js";

const held = (attempt: number, cpu: number) => ({
  job_key: `s00.app.biz.job_${attempt}`,
  attempt,
  resources: { cpu, memory_mb: 256 * cpu, gpu: 0 },
  assigned_at: "2026-11-28T00:00:00.000Z",
});

const node: AllocationRecord = {
  node_id: "node_1",
  attempts: { job_a: held(1, 1), job_b: held(2, 2), job_c: held(1, 4) },
};

describe("allocationUse", () => {
  it("sums every attempt's resources and counts a slot each", () => {
    expect(allocationUse(node)).toEqual({ cpu: 7, memory_mb: 1792, gpu: 0, slots: 3 });
    expect(allocationUse(null)).toEqual({ cpu: 0, memory_mb: 0, gpu: 0, slots: 0 });
  });

  it("leaves out the attempts being released, and only at the attempt named", () => {
    const released = (jobId: string, attempt: number) => jobId === "job_b" && attempt === 2;
    expect(allocationUse(node, released)).toEqual({ cpu: 5, memory_mb: 1280, gpu: 0, slots: 2 });
    expect(allocationUse(node, (jobId, attempt) => jobId === "job_b" && attempt === 1)).toEqual(allocationUse(node));
  });
});
