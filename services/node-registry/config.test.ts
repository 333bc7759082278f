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
