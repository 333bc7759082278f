import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startServiceProcess } from "../harness/service-process.js";
import { programArgs } from "../harness/programs.js";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Runs a program to its exit with `env` added, and returns its exit code and everything it wrote. */
function run(
  script: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [...programArgs(script), ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, output })));
}

const STACK_FRAME = /^\s+at /m;

/** Every program that reads a NATS server list from its environment, and how it is started. */
const PROGRAMS = [
  { name: "scheduler", script: "services/scheduler/main.ts", args: [], variable: "NATS_URL" },
  { name: "gateway", script: "services/gateway/main.ts", args: [], variable: "NATS_URL" },
  { name: "node-registry", script: "services/node-registry/main.ts", args: [], variable: "NATS_URL" },
  { name: "log-relay", script: "services/log-relay/main.ts", args: [], variable: "NATS_URL" },
  { name: "billing", script: "services/billing/main.ts", args: [], variable: "NATS_URL" },
  { name: "webhooks", script: "services/webhooks/main.ts", args: [], variable: "NATS_URL" },
  { name: "dev", script: "services/dev/main.ts", args: [], variable: "NATS_URL" },
  {
    name: "admin",
    script: "services/admin/main.ts",
    args: ["business", "create", "--app", "local", "--name", "x"],
    variable: "NATS_URL",
  },
  { name: "agent", script: "clients/agent/main.ts", args: [], variable: "CJS_AGENT_NATS_URL" },
] as const;

describe("a NATS server list that is not one", () => {
  for (const { name, script, args, variable } of PROGRAMS) {
    for (const value of ["not a url", "nats://:99999"]) {
      it(`${name} with ${variable}=${value} exits 2 naming the variable, without a stack trace`, async () => {
        const { code, output } = await run(script, args, {
          [variable]: value,
          CJS_OPS_PORT: "0",
          CJS_PORT: "0",
          CJS_DATA_DIR: "/nonexistent/cjs-config-errors",
        });
        expect(output).toContain(`${variable}: ${JSON.stringify(value)} is not a NATS server URL`);
        expect(output).not.toMatch(STACK_FRAME);
        expect(code, output).toBe(2);
      });
    }
  }

  for (const { name, script, args } of PROGRAMS.filter((program) =>
    ["scheduler", "gateway", "admin"].includes(program.name),
  )) {
    it(`${name} with a NATS_CREDS_FILE it cannot read exits 2 naming the variable, without a stack trace`, async () => {
      const { code, output } = await run(script, args, {
        NATS_CREDS_FILE: "/nonexistent/cjs.creds",
        NATS_URL: "nats://127.0.0.1:9",
        CJS_OPS_PORT: "0",
        CJS_PORT: "0",
      });
      expect(output).toContain("NATS_CREDS_FILE: cannot read /nonexistent/cjs.creds (ENOENT)");
      expect(output).not.toMatch(STACK_FRAME);
      expect(code, output).toBe(2);
    });
  }

  it("admin with --nats that is not a URL exits 2 naming the flag, without a stack trace", async () => {
    const { code, output } = await run(
      "services/admin/main.ts",
      ["business", "create", "--app", "local", "--name", "x", "--nats", "not a url"],
      {},
    );
    expect(output).toContain(`--nats: "not a url" is not a NATS server URL`);
    expect(output).not.toMatch(STACK_FRAME);
    expect(code, output).toBe(2);
  });
});

describe("a CJS_* variable no process reads", () => {
  for (const service of ["scheduler", "gateway"]) {
    it(`${service} warns of it at start, with the name it most likely meant`, async () => {
      // NATS is unreachable: the warning comes before the connect, and the process waits there.
      const running = startServiceProcess({
        service,
        env: { NATS_URL: "nats://127.0.0.1:9", CJS_OPS_PORT: "0", CJS_PORT: "0", CJS_NATS_REPLICA: "3" },
      });
      try {
        const line = await running.waitForLog(
          (logged) => typeof logged.msg === "string" && logged.msg.startsWith("ignoring unknown settings"),
        );
        expect(line).toMatchObject({
          level: 40,
          unknown_settings: expect.arrayContaining([{ name: "CJS_NATS_REPLICA", suggestion: "CJS_NATS_REPLICAS" }]),
        });
      } finally {
        await running.stop();
      }
    });
  }
});

describe("signing keys the gateway cannot use", () => {
  const cases: Array<{ env: Record<string, string>; problem: string }> = [
    {
      env: { CJS_JWT_SIGNING_KEYS_FILE: "/nonexistent/jwt-keys.json" },
      problem: "CJS_JWT_SIGNING_KEYS_FILE: cannot read /nonexistent/jwt-keys.json (ENOENT)",
    },
    {
      env: { CJS_URL_SIGNING_KEYS: '{"keys":[{"kid":"u1","secret":"too-short"}]}' },
      problem: "CJS_URL_SIGNING_KEYS: keys[0].secret: a secret is base64url text of at least 32 random bytes",
    },
    { env: { CJS_JWT_SIGNING_KEYS: "{not json" }, problem: "CJS_JWT_SIGNING_KEYS: is not valid JSON" },
  ];
  for (const { env, problem } of cases) {
    it(`stop the gateway with exit 2 and one line naming the variable: ${problem}`, async () => {
      // NATS is unreachable: the keys are checked before the connect.
      const { code, output } = await run("services/gateway/main.ts", [], {
        ...env,
        NATS_URL: "nats://127.0.0.1:9",
        CJS_OPS_PORT: "0",
        CJS_PORT: "0",
      });
      expect(output).toContain(problem);
      expect(output).not.toMatch(STACK_FRAME);
      expect(code, output).toBe(2);
    });
  }
});

describe("CORS origins the gateway cannot use", () => {
  it("stop the gateway with exit 2 and one line naming the variable and the entry", async () => {
    const { code, output } = await run("services/gateway/main.ts", [], {
      CJS_CORS_ORIGINS: "https://app.example.com,*",
      NATS_URL: "nats://127.0.0.1:9",
      CJS_OPS_PORT: "0",
      CJS_PORT: "0",
    });
    expect(output).toContain('CJS_CORS_ORIGINS: "*" is not allowed: list each origin that may call the API');
    expect(output).not.toMatch(STACK_FRAME);
    expect(code, output).toBe(2);
  });
});

describe("webhook settings the webhooks service cannot use", () => {
  for (const [variable, value, problem] of [
    [
      "CJS_WEBHOOK_RETRY_SCHEDULE_SECONDS",
      "10,soon",
      "CJS_WEBHOOK_RETRY_SCHEDULE_SECONDS: must be whole seconds separated by commas",
    ],
    ["CJS_WEBHOOK_SECRET_KEY", "too-short", "CJS_WEBHOOK_SECRET_KEY: must be at least 32 characters"],
    ["CJS_WEBHOOKS_ALLOW_PRIVATE_URLS", "maybe", "CJS_WEBHOOKS_ALLOW_PRIVATE_URLS"],
  ] as const) {
    it(`stop it with exit 2 naming ${variable}`, async () => {
      const { code, output } = await run("services/webhooks/main.ts", [], {
        [variable]: value,
        NATS_URL: "nats://127.0.0.1:9",
        CJS_OPS_PORT: "0",
      });
      expect(output).toContain(problem);
      // A secret's text is never echoed.
      if (variable === "CJS_WEBHOOK_SECRET_KEY") expect(output).not.toContain(value);
      expect(output).not.toMatch(STACK_FRAME);
      expect(code, output).toBe(2);
    });
  }
});
