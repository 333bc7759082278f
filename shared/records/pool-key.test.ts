import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  checkSharedPools,
  metricsPool,
  operatorPoolKey,
  placementPoolKey,
  PoolSettings,
  selfHostedPoolKey,
} from "./pool-key.js";

const Settings = PoolSettings.superRefine(checkSharedPools);

describe("pool keys", () => {
  it("scopes an operator pool to its application unless the pool is shared", () => {
    expect(operatorPoolKey("app-a", "default", [])).toBe("op.app-a.default");
    expect(operatorPoolKey("app-b", "default", [])).not.toBe(operatorPoolKey("app-a", "default", []));
    expect(operatorPoolKey("app-a", "default", ["default"])).toBe("op.*.default");
    expect(operatorPoolKey("app-b", "default", ["default"])).toBe(operatorPoolKey("app-a", "default", ["default"]));
    expect(operatorPoolKey("app-a", "gpu", ["default"])).toBe("op.app-a.gpu");
  });

  it("labels metrics with an operator pool's key and every self-hosted pool as one self_hosted, never a business id", () => {
    expect(metricsPool(operatorPoolKey("app-a", "gpu", []))).toBe("op.app-a.gpu");
    expect(metricsPool("op.*.default")).toBe("op.*.default");
    expect(metricsPool(selfHostedPoolKey("biz_a", "default"))).toBe("self_hosted");
    expect(metricsPool(selfHostedPoolKey("biz_b", "other"))).toBe("self_hosted");
  });

  it("keeps a self-hosted pool to its business", () => {
    expect(selfHostedPoolKey("biz_a", "default")).toBe("sh.biz_a.default");
  });

  it("places a record of an operator pool by its application and the current shared pools, whatever form its stored key has", () => {
    const record = { app_id: "app-a", pool_id: "default" };
    for (const pool_key of ["op.default", "op.app-a.default", "op.*.default"]) {
      expect(placementPoolKey({ ...record, pool_key }, [])).toBe("op.app-a.default");
      expect(placementPoolKey({ ...record, pool_key }, ["default"])).toBe("op.*.default");
    }
    expect(placementPoolKey({ ...record, pool_key: "sh.biz_a.default" }, ["default"])).toBe("sh.biz_a.default");
  });
});

describe("pool settings", () => {
  it("shares no pool unless told, and takes a subset of the operator pools", () => {
    expect(Settings.parse({})).toEqual({ CJS_OPERATOR_POOLS: ["default"], CJS_SHARED_OPERATOR_POOLS: [] });
    expect(Settings.parse({ CJS_OPERATOR_POOLS: "default, gpu", CJS_SHARED_OPERATOR_POOLS: " gpu ," })).toEqual({
      CJS_OPERATOR_POOLS: ["default", "gpu"],
      CJS_SHARED_OPERATOR_POOLS: ["gpu"],
    });
  });

  it("refuses a shared pool that is not an operator pool, naming the variable", () => {
    const result = Settings.safeParse({ CJS_OPERATOR_POOLS: "default", CJS_SHARED_OPERATOR_POOLS: "gpu" });
    expect(result.success).toBe(false);
    const issue = (result.error as z.ZodError).issues[0]!;
    expect(issue.path).toEqual(["CJS_SHARED_OPERATOR_POOLS"]);
    expect(issue.message).toContain("gpu is not in CJS_OPERATOR_POOLS");
  });
});
