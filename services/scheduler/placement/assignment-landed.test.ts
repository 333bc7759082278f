import { describe, expect, it } from "vitest";
import type { Versioned } from "../../../shared/nats/index.js";
import type { JobRecord } from "../../../shared/records/index.js";
import { assignmentLanded } from "./assignment-landed.js";

const KEY = "jobkey";

/** Only what the check reads; the rest of a record does not matter to it. */
function stored(fields: Pick<JobRecord, "state" | "attempt" | "node_id">): Versioned<JobRecord> {
  return { value: { job_id: "job_1", ...fields } as JobRecord, revision: 7 };
}

const reading = (entry: Versioned<JobRecord> | null) => ({ get: async () => entry });

describe("whether an assignment whose write got no answer landed", () => {
  it("landed when the record shows this attempt on this node, assigned or already further on", async () => {
    for (const state of ["assigned", "running", "succeeded"] as const) {
      const entry = stored({ state, attempt: 2, node_id: "nod_a" });
      expect(await assignmentLanded(reading(entry), KEY, "nod_a", 2)).toBe(entry.value);
    }
  });

  it("did not land when the record is still queued, shows another attempt or another node, or is gone", async () => {
    const answers = [
      stored({ state: "queued", attempt: 1, node_id: null }),
      stored({ state: "assigned", attempt: 3, node_id: "nod_a" }),
      stored({ state: "assigned", attempt: 2, node_id: "nod_b" }),
      null,
    ];
    for (const entry of answers) expect(await assignmentLanded(reading(entry), KEY, "nod_a", 2)).toBeNull();
  });

  it("is not known when the record cannot be read either", async () => {
    const failing = {
      get: async (): Promise<Versioned<JobRecord> | null> => {
        throw new Error("timeout");
      },
    };
    expect(await assignmentLanded(failing, KEY, "nod_a", 2)).toBeUndefined();
  });
});
