import { describe, expect, it } from "vitest";
import { ConfigError } from "../../shared/runtime/index.js";
import { loadConfig } from "./config.js";

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe("gateway rate-limit settings", () => {
  it("default to 1000 requests a minute and 30000 an hour", () => {
    expect(loadConfig({})).toMatchObject({ CJS_RATE_LIMIT_PER_MINUTE: 1000, CJS_RATE_LIMIT_PER_HOUR: 30_000 });
  });

  it("take the values set in the environment", () => {
    expect(loadConfig({ CJS_RATE_LIMIT_PER_MINUTE: "20", CJS_RATE_LIMIT_PER_HOUR: "500" })).toMatchObject({
      CJS_RATE_LIMIT_PER_MINUTE: 20,
      CJS_RATE_LIMIT_PER_HOUR: 500,
    });
  });

  it("refuse zero, negative and non-integer limits, naming each setting", () => {
    for (const bad of ["0", "-5", "2.5", "many"]) {
      const problems = problemsOf({ CJS_RATE_LIMIT_PER_MINUTE: bad, CJS_RATE_LIMIT_PER_HOUR: bad });
      expect(problems.map((problem) => problem.split(":")[0])).toEqual(["CJS_RATE_LIMIT_PER_MINUTE", "CJS_RATE_LIMIT_PER_HOUR"]);
    }
  });
});
