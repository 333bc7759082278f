import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";

describe("the pool settings", () => {
  it("shares no operator pool across applications unless told", () => {
    expect(loadConfig({ NATS_URL: "nats://127.0.0.1:4222" }).CJS_SHARED_OPERATOR_POOLS).toEqual([]);
  });

  it("does not start with a shared pool that is not an operator pool, and names the variable", () => {
    expect(() =>
      loadConfig({
        NATS_URL: "nats://127.0.0.1:4222",
        CJS_OPERATOR_POOLS: "default",
        CJS_SHARED_OPERATOR_POOLS: "default,gpu",
      }),
    ).toThrow(/CJS_SHARED_OPERATOR_POOLS: gpu is not in CJS_OPERATOR_POOLS/);
  });
});

describe("the retention settings", () => {
  const NATS_URL = "nats://127.0.0.1:4222";

  it("leaves retention to the plans unless an override is set; an empty override counts as unset", () => {
    expect(loadConfig({ NATS_URL }).CJS_RETENTION_SECONDS_OVERRIDE).toBeUndefined();
    expect(loadConfig({ NATS_URL, CJS_RETENTION_SECONDS_OVERRIDE: "" }).CJS_RETENTION_SECONDS_OVERRIDE).toBeUndefined();
    expect(loadConfig({ NATS_URL, CJS_RETENTION_SECONDS_OVERRIDE: "90" }).CJS_RETENTION_SECONDS_OVERRIDE).toBe(90);
  });

  it("refuses an override that is not a whole number of seconds from 1, naming the variable", () => {
    expect(() => loadConfig({ NATS_URL, CJS_RETENTION_SECONDS_OVERRIDE: "0" })).toThrow(
      /CJS_RETENTION_SECONDS_OVERRIDE/,
    );
    expect(() => loadConfig({ NATS_URL, CJS_RETENTION_SECONDS_OVERRIDE: "soon" })).toThrow(
      /CJS_RETENTION_SECONDS_OVERRIDE/,
    );
  });
});
