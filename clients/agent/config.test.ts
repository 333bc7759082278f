import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../shared/runtime/index.js";
import { loadConfig } from "./config.js";
import { parseFlags } from "./flags.js";

describe("agent settings", () => {
  it("has a default for everything but the credentials", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      CJS_GATEWAY_URL: "http://127.0.0.1:8080",
      CJS_POOL: "default",
      CJS_LABELS: {},
      CJS_SLOTS: 1,
      CJS_JOB_TYPES: ["shell"],
      CJS_WORK_DIR: resolve(".cjs-agent"),
      CJS_KILL_GRACE_MS: 10_000,
    });
    expect(config.CJS_API_KEY).toBeUndefined();
    expect(config.CJS_CPU).toBeGreaterThan(0);
    expect(config.CJS_MEMORY_MB).toBeGreaterThan(0);
  });

  it("reads labels and job types as comma-separated lists", () => {
    const config = loadConfig({ CJS_LABELS: "zone=eu-1, gpu=a100", CJS_JOB_TYPES: "shell,python" });
    expect(config.CJS_LABELS).toEqual({ zone: "eu-1", gpu: "a100" });
    expect(config.CJS_JOB_TYPES).toEqual(["shell", "python"]);
  });

  it("lists every bad setting at once", () => {
    let error: unknown;
    try {
      loadConfig({ CJS_LABELS: "oops", CJS_SLOTS: "0", CJS_GATEWAY_URL: "ftp://x" });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((problem) => problem.split(":")[0])).toEqual([
      "CJS_GATEWAY_URL",
      "CJS_LABELS",
      "CJS_SLOTS",
    ]);
  });

  it("maps flags onto the same names, and refuses an unknown flag", () => {
    expect(parseFlags(["--gateway-url", "http://gw:8080", "--slots=4", "--labels", "a=b"])).toEqual({
      help: false,
      env: { CJS_GATEWAY_URL: "http://gw:8080", CJS_SLOTS: "4", CJS_LABELS: "a=b" },
    });
    expect(parseFlags(["-h"])).toEqual({ help: true });
    expect(() => parseFlags(["--nope"])).toThrow();
  });

  it("talks HTTP unless a NATS URL is set, and reads NATS credentials under the services' names", () => {
    expect(loadConfig({}).CJS_AGENT_NATS_URL).toBeUndefined();
    const config = loadConfig({
      CJS_AGENT_NATS_URL: "nats://a:4222,nats://b:4222",
      NATS_USER: "agent-eu1",
      NATS_PASSWORD: "pw",
      CJS_AGENT_NATS_INBOX_PREFIX: "_INBOX_eu1",
    });
    expect(config).toMatchObject({
      CJS_AGENT_NATS_URL: "nats://a:4222,nats://b:4222",
      NATS_USER: "agent-eu1",
      NATS_PASSWORD: "pw",
      CJS_AGENT_NATS_INBOX_PREFIX: "_INBOX_eu1",
    });
    expect(loadConfig({}).CJS_AGENT_NATS_INBOX_PREFIX).toBe("_INBOX");
    expect(() => loadConfig({ CJS_AGENT_NATS_INBOX_PREFIX: "_INBOX.>" })).toThrow(ConfigError);
    const flags = parseFlags(["--nats-url", "nats://n:4222", "--nats-creds-file", "/etc/agent.creds"]);
    expect(flags).toEqual({
      help: false,
      env: { CJS_AGENT_NATS_URL: "nats://n:4222", NATS_CREDS_FILE: "/etc/agent.creds" },
    });
  });
});
