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
      expect(problems.map((problem) => problem.split(":")[0])).toEqual([
        "CJS_RATE_LIMIT_PER_MINUTE",
        "CJS_RATE_LIMIT_PER_HOUR",
      ]);
    }
  });
});

describe("CJS_CORS_ORIGINS", () => {
  it("is empty by default: no origin may call cross-origin", () => {
    expect(loadConfig({}).CJS_CORS_ORIGINS).toEqual([]);
    expect(loadConfig({ CJS_CORS_ORIGINS: "" }).CJS_CORS_ORIGINS).toEqual([]);
  });

  it("reads a comma-separated list of origins, spaces around entries ignored", () => {
    expect(loadConfig({ CJS_CORS_ORIGINS: "https://app.example.com, http://localhost:5173" }).CJS_CORS_ORIGINS).toEqual(
      ["https://app.example.com", "http://localhost:5173"],
    );
  });

  it.each([
    ["*", "is not allowed"],
    ["null", "is not allowed"],
    ["app.example.com", "is not an origin"],
    ["ftp://files.example.com", "the scheme must be https:// or http://"],
    ["https://app.example.com/", 'write "https://app.example.com"'],
    ["https://App.example.com", 'write "https://app.example.com"'],
    ["https://app.example.com:443", 'write "https://app.example.com"'],
    ["https://app.example.com/portal", 'write "https://app.example.com"'],
  ])("refuses %j, naming the variable", (entry, reason) => {
    const problems = problemsOf({ CJS_CORS_ORIGINS: `https://ok.example.com,${entry}` });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^CJS_CORS_ORIGINS: /);
    expect(problems[0]).toContain(reason);
  });
});

describe("CJS_API_KEY_MAX_TTL_DAYS", () => {
  it("is unset by default (keys may live for ever), also when empty, and takes a number of days", () => {
    expect(loadConfig({}).CJS_API_KEY_MAX_TTL_DAYS).toBeUndefined();
    expect(loadConfig({ CJS_API_KEY_MAX_TTL_DAYS: "" }).CJS_API_KEY_MAX_TTL_DAYS).toBeUndefined();
    expect(loadConfig({ CJS_API_KEY_MAX_TTL_DAYS: "90" }).CJS_API_KEY_MAX_TTL_DAYS).toBe(90);
  });

  it("refuses zero, negative, fractional and non-numeric values, naming the setting", () => {
    for (const bad of ["0", "-1", "1.5", "forever"]) {
      expect(problemsOf({ CJS_API_KEY_MAX_TTL_DAYS: bad }).map((problem) => problem.split(":")[0])).toEqual([
        "CJS_API_KEY_MAX_TTL_DAYS",
      ]);
    }
  });
});
