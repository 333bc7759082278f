import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createLogger } from "./logger.js";
import { settingNames, unknownSettings, warnUnknownSettings } from "./unknown-settings.js";

const known = settingNames([
  z.object({ CJS_NATS_REPLICAS: z.string(), CJS_PORT: z.string() }),
  z.object({ CJS_PORT: z.string(), CJS_OPS_PORT: z.string(), LOG_LEVEL: z.string() }),
]);

describe("unknownSettings", () => {
  it("lists the CJS_* variables no schema reads, with the known name a typo most likely meant", () => {
    const env = {
      CJS_NATS_REPLICA: "3",
      CJS_PORT: "8080",
      CJS_OPS_PORT: "9100",
      CJS_FROBNICATE: "1",
      PATH: "/bin",
      LOG_LEVL: "debug",
    };
    expect(unknownSettings(env, known)).toEqual([
      { name: "CJS_FROBNICATE" },
      { name: "CJS_NATS_REPLICA", suggestion: "CJS_NATS_REPLICAS" },
    ]);
  });

  it("finds nothing when every CJS_* variable is read by some schema", () => {
    expect(unknownSettings({ CJS_PORT: "1", CJS_OPS_PORT: "2", HOME: "/root" }, known)).toEqual([]);
  });
});

describe("warnUnknownSettings", () => {
  it("logs one warning naming each unknown variable and its likely intended name", () => {
    const lines: string[] = [];
    const logger = createLogger({
      service: "test",
      level: "info",
      destination: { write: (line: string) => void lines.push(line) },
    });
    warnUnknownSettings(logger, { CJS_NATS_REPLICA: "3", CJS_FROBNICATE: "1" }, known);
    warnUnknownSettings(logger, { CJS_PORT: "1" }, known);
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: 40,
      msg: "ignoring unknown settings: CJS_FROBNICATE, CJS_NATS_REPLICA (did you mean CJS_NATS_REPLICAS?)",
    });
  });
});
