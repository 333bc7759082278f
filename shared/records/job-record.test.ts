import { describe, expect, it } from "vitest";
import { queuedJobRecord } from "../../test/harness/job-records.js";
import { Job } from "../contract/index.js";
import { encodeJson } from "../nats/index.js";
import { JobRecord, mayHaveChargedAttempt, publicJob } from "./job-record.js";

const ran = {
  state: "succeeded",
  timeline: [{ state: "queued" }, { state: "assigned" }, { state: "running" }, { state: "succeeded" }],
};

describe("mayHaveChargedAttempt", () => {
  it("rules out a self-hosted job and one that never ran, and lets an operator-pool job that ran through", () => {
    expect(mayHaveChargedAttempt(encodeJson({ ...ran, pool_key: "sh.biz_1.gpu" }))).toBe(false);
    expect(
      mayHaveChargedAttempt(
        encodeJson({
          state: "cancelled",
          pool_key: "op.default",
          timeline: [{ state: "queued" }, { state: "cancelled" }],
        }),
      ),
    ).toBe(false);
    expect(mayHaveChargedAttempt(encodeJson({ ...ran, pool_key: "op.default" }))).toBe(true);
  });

  it("reads the bytes of a view into a larger buffer, not the whole buffer", () => {
    const record = encodeJson({ ...ran, pool_key: "sh.biz_1.gpu" });
    const other = encodeJson({ ...ran, pool_key: "op.default" });
    const both = new Uint8Array(record.length + other.length);
    both.set(record);
    both.set(other, record.length);
    expect(mayHaveChargedAttempt(both.subarray(0, record.length))).toBe(false);
  });
});

describe("JobRecord", () => {
  const stored = {
    ...queuedJobRecord({ key_id: "key_EEEEEEEEEEEEEEEEEEEE", key_slot: true }),
    written_by_a_newer_replica: { kept: true },
  };

  it("keeps the fields it does not name, so a replica that writes a record back never erases a newer one's", () => {
    expect(JobRecord.parse(stored)).toEqual(stored);
  });

  it("reads a record without key_slot as not known", () => {
    const { key_slot: _slot, ...older } = stored;
    expect(JobRecord.parse(older).key_slot).toBeUndefined();
  });

  it("shows the public Job only: no internal field and no field it does not name", () => {
    const job = publicJob(JobRecord.parse(stored));
    expect(Object.keys(job)).toEqual(Object.keys(Job.shape));
    expect(Job.strict().parse(job)).toEqual(job);
  });
});
