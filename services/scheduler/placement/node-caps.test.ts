import { describe, expect, it } from "vitest";
import { nodeCaps } from "./node-caps.js";

const node = { job_types: ["shell", "python", "gpu"], capacity: { cpu: 8, memory_mb: 8192, gpu: 1, slots: 6 } };

describe("nodeCaps", () => {
  it("leaves a node registered with a JWT (no quotas) as it is", () => {
    expect(nodeCaps({ ...node, quotas: null })).toEqual({
      jobTypes: ["shell", "python", "gpu"],
      slots: 6,
      perHour: null,
    });
    expect(nodeCaps(node)).toEqual({ jobTypes: ["shell", "python", "gpu"], slots: 6, perHour: null });
  });

  it("narrows job types to allowedJobTypes, caps slots at maxConcurrentJobs and passes maxJobsPerHour on", () => {
    const quotas = { maxJobsPerHour: 10, maxConcurrentJobs: 2, allowedJobTypes: ["shell", "ruby"] };
    expect(nodeCaps({ ...node, quotas })).toEqual({ jobTypes: ["shell"], slots: 2, perHour: 10 });
  });

  it("keeps the node's slots when they are below maxConcurrentJobs", () => {
    expect(
      nodeCaps({ ...node, quotas: { maxJobsPerHour: null, maxConcurrentJobs: 50, allowedJobTypes: null } }).slots,
    ).toBe(6);
  });
});
