import { describe, expect, it } from "vitest";
import { encodeJson } from "../nats/index.js";
import { mayHaveChargedAttempt } from "./job-record.js";

const ran = { state: "succeeded", timeline: [{ state: "queued" }, { state: "assigned" }, { state: "running" }, { state: "succeeded" }] };

describe("mayHaveChargedAttempt", () => {
  it("rules out a self-hosted job and one that never ran, and lets an operator-pool job that ran through", () => {
    expect(mayHaveChargedAttempt(encodeJson({ ...ran, pool_key: "sh.biz_1.gpu" }))).toBe(false);
    expect(mayHaveChargedAttempt(encodeJson({ state: "cancelled", pool_key: "op.default", timeline: [{ state: "queued" }, { state: "cancelled" }] }))).toBe(false);
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
