import { describe, expect, it } from "vitest";
import { AllocationRecord } from "../../../shared/records/index.js";
import { allocationOf } from "./allocation-fields.js";

const attempt = {
  job_key: "s07.app.biz.job",
  attempt: 1,
  resources: { cpu: 0.5, memory_mb: 64, gpu: 0 },
  assigned_at: "2026-11-27T06:00:00.000Z",
};
const record = { node_id: "nod_1", attempts: { job_1: attempt }, assigned_last_hour: [[1795750000, 2]] };

describe("allocationOf, the watch's quick check of an allocation record", () => {
  it("accepts what the schema accepts, as the same object", () => {
    for (const value of [record, { node_id: "nod_2", attempts: {} }, { ...record, extra: true }]) {
      expect(AllocationRecord.safeParse(value).success).toBe(true);
      expect(allocationOf(value)).toBe(value);
    }
  });

  it("leaves to the schema a record missing a field placement reads", () => {
    const malformed: unknown[] = [
      null,
      "text",
      { attempts: {} },
      { node_id: "nod_1", attempts: [] },
      { node_id: "nod_1", attempts: { job_1: { ...attempt, attempt: "1" } } },
      { node_id: "nod_1", attempts: { job_1: { ...attempt, resources: { cpu: 1 } } } },
      { node_id: "nod_1", attempts: { job_1: { ...attempt, job_key: undefined } } },
      { ...record, assigned_last_hour: [[1795750000]] },
    ];
    for (const value of malformed) {
      expect(allocationOf(value)).toBeUndefined();
      expect(AllocationRecord.safeParse(value).success).toBe(false);
    }
  });
});
