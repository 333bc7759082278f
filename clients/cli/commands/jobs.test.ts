import { describe, expect, it } from "vitest";
import { submitRequest } from "./job-submit.js";

const NO_FLAGS = { label: [], env: [], meta: [], dependsOn: [] };

describe("jobs submit flags", () => {
  it("--depends-on (repeatable) becomes depends_on, --concurrency-key with --max-running becomes concurrency", () => {
    const body = submitRequest(
      { ...NO_FLAGS, dependsOn: ["job_A", "job_B"], concurrencyKey: "deploy", maxRunning: "2" },
      ["true"],
    );
    expect(body).toMatchObject({ depends_on: ["job_A", "job_B"], concurrency: { key: "deploy", max_running: 2 } });
  });

  it("--concurrency-key alone allows one at a time; neither flag leaves both fields out", () => {
    expect(submitRequest({ ...NO_FLAGS, concurrencyKey: "deploy" }, ["true"]).concurrency).toEqual({
      key: "deploy",
      max_running: 1,
    });
    const plain = submitRequest(NO_FLAGS, ["true"]);
    expect(plain).not.toHaveProperty("depends_on");
    expect(plain).not.toHaveProperty("concurrency");
  });

  it("--max-running without --concurrency-key is a usage error", () => {
    expect(() => submitRequest({ ...NO_FLAGS, maxRunning: "2" }, ["true"])).toThrow(
      "--max-running needs --concurrency-key.",
    );
  });
});
