import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_OPS_PORTS } from "../../deploy/docker/healthcheck.mjs";
import { loadConfig as billingConfig } from "../../services/billing/config.js";
import { loadConfig as gatewayConfig } from "../../services/gateway/config.js";
import { loadConfig as logRelayConfig } from "../../services/log-relay/config.js";
import { loadConfig as webhooksConfig } from "../../services/webhooks/config.js";
import { loadConfig as nodeRegistryConfig } from "../../services/node-registry/config.js";
import { loadConfig as schedulerConfig } from "../../services/scheduler/config.js";
import { nodeFlagsOf } from "../../shared/runtime/index.js";
import { parseDockerfile, type Stage } from "./dockerfile.js";
import { DEPLOY, ROOT } from "./manifest-check.js";

/** The major of the Node.js LTS the project pins (.nvmrc, which `make setup` provides). */
const NODE_MAJOR = readFileSync(join(ROOT, ".nvmrc"), "utf8").trim().replace(/^v/, "").split(".")[0];
const stages = parseDockerfile(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
const runtime = stages.at(-1) as Stage;
const ENTRYPOINT = join(DEPLOY, "docker", "entrypoint.sh");
const HEALTHCHECK = join(DEPLOY, "docker", "healthcheck.mjs");

function args(stage: Stage, keyword: string): string[] {
  return stage.instructions
    .filter((instruction) => instruction.keyword === keyword)
    .map((instruction) => instruction.args);
}

describe("the Dockerfile", () => {
  it("builds in one stage and runs from another, on a slim image of the pinned Node.js LTS (.nvmrc)", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(runtime.from).toMatch(new RegExp(`^node:${NODE_MAJOR}[.\\d]*-\\w+-slim$`));
    expect(stages[0]?.from).toBe(runtime.from);
    expect(args(stages[0] as Stage, "RUN")).toContain("npm run build && npm run portal");
  });

  it("installs production dependencies only in the image it runs", () => {
    const installs = args(runtime, "RUN").filter((command) => /\bnpm (ci|install|i)\b/.test(command));
    expect(installs).toHaveLength(1);
    expect(installs[0]).toMatch(/\bnpm ci --omit=dev\b/);
    const fromBuild = args(runtime, "COPY").filter((copy) => copy.startsWith("--from="));
    // Each package our patches/ change (as the build stage patched it), the compiled services, and the portal's build the
    // gateway serves at / (CJS_PORTAL_DIR).
    const patched = readdirSync(join(ROOT, "patches"))
      .filter((file) => file.endsWith(".patch"))
      .map((file) => file.replace(/\+[^+]+\.patch$/, "").replaceAll("+", "/"));
    expect(patched.length).toBeGreaterThan(0);
    expect(fromBuild).toEqual([
      ...patched.map((name) => `--from=${stages[0]?.name} /src/node_modules/${name} ./node_modules/${name}`),
      `--from=${stages[0]?.name} /src/dist ./dist`,
      `--from=${stages[0]?.name} /src/clients/portal/dist ./clients/portal/dist`,
    ]);
    expect(args(stages[0] as Stage, "RUN")).toContainEqual(expect.stringContaining("npx patch-package"));
  });

  it("runs as a user other than root, with a health check and the entrypoint that picks the service", () => {
    const user = args(runtime, "USER").at(-1);
    expect(user).toBeDefined();
    expect(["root", "0"]).not.toContain(user?.split(":")[0]);
    expect(args(runtime, "HEALTHCHECK")).toEqual([
      expect.stringMatching(/CMD \["node", "\/app\/deploy\/docker\/healthcheck\.mjs"\]$/),
    ]);
    expect(args(runtime, "ENTRYPOINT")).toEqual([expect.stringContaining('"/app/deploy/docker/entrypoint.sh"')]);
    expect(args(runtime, "COPY")).toContain(
      "deploy/docker/entrypoint.sh deploy/docker/healthcheck.mjs ./deploy/docker/",
    );
  });

  it("sends the build only what it copies: .dockerignore admits each COPY source and nothing like node_modules or .tools", () => {
    const rules = readFileSync(join(ROOT, ".dockerignore"), "utf8")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith("#"));
    expect(rules[0]).toBe("*");
    const admitted = rules.filter((rule) => rule.startsWith("!")).map((rule) => rule.slice(1).replace(/\/$/, ""));
    const sources = stages
      .flatMap((stage) => args(stage, "COPY"))
      .filter((copy) => !copy.startsWith("--from="))
      .flatMap((copy) => copy.split(" ").slice(0, -1));
    for (const source of sources) {
      expect(existsSync(join(ROOT, source)), source).toBe(true);
      expect(
        admitted.some((path) => source === path || source.startsWith(`${path}/`)),
        `${source} is not admitted by .dockerignore`,
      ).toBe(true);
    }
    expect(admitted.filter((path) => /node_modules|\.tools|\.data|dist/.test(path))).toEqual([]);
  });
});

describe("the entrypoint", () => {
  it("accepts exactly the programs of the repository: every service with a main.ts but the dev launcher, and the agent", () => {
    const accepted = [...readFileSync(ENTRYPOINT, "utf8").matchAll(/^\s*([a-z|-]+)\)$/gm)].flatMap((match) =>
      (match[1] ?? "").split("|"),
    );
    const programs = readdirSync(join(ROOT, "services")).filter(
      (name) => name !== "dev" && existsSync(join(ROOT, "services", name, "main.ts")),
    );
    expect(accepted.sort()).toEqual([...programs, "agent"].sort());
    expect(existsSync(join(ROOT, "clients", "agent", "main.ts"))).toBe(true);
  });

  it("starts each program with the V8 flags of shared/runtime/node-flags.ts", () => {
    // A stand-in for node on PATH that prints the arguments it was started with, one a line.
    const bin = mkdtempSync(join(tmpdir(), "entrypoint-node-"));
    try {
      writeFileSync(join(bin, "node"), '#!/bin/sh\nprintf "%s\\n" "$@"\n');
      chmodSync(join(bin, "node"), 0o755);
      for (const program of [
        "gateway",
        "scheduler",
        "node-registry",
        "log-relay",
        "billing",
        "webhooks",
        "admin",
        "agent",
      ]) {
        const result = spawnSync("sh", [ENTRYPOINT, "--an-argument"], {
          env: { PATH: `${bin}:${process.env.PATH ?? ""}`, SERVICE: program },
          encoding: "utf8",
        });
        expect(result.status, result.stderr).toBe(0);
        const args = result.stdout.trimEnd().split("\n");
        const script = args.findIndex((arg) => arg.endsWith("/main.js"));
        expect(args.slice(0, script), program).toEqual(nodeFlagsOf(program));
        expect(args.slice(script + 1)).toEqual(["--an-argument"]);
      }
      expect(nodeFlagsOf("gateway")).not.toEqual([]);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("refuses an unknown or missing SERVICE with exit code 2 and the list of names", () => {
    for (const service of ["gatway", ""]) {
      const result = spawnSync("sh", [ENTRYPOINT], {
        env: { PATH: process.env.PATH ?? "", SERVICE: service },
        encoding: "utf8",
      });
      expect(result.status).toBe(2);
      expect(result.stderr).toContain(
        `SERVICE must be one of gateway, scheduler, node-registry, log-relay, billing, webhooks, agent, admin (got '${service}')`,
      );
    }
  });
});

describe("the health check", () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  async function opsServer(status: number): Promise<number> {
    server = createServer((request, response) => {
      response.writeHead(request.url === "/healthz" ? status : 404).end();
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    return (server.address() as AddressInfo).port;
  }

  /** The health check's exit code; asynchronous, since the ops server answers from this process. */
  async function healthcheck(env: Record<string, string>): Promise<number | null> {
    const child = spawn(process.execPath, [HEALTHCHECK], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: "ignore",
    });
    const [code] = (await once(child, "exit")) as [number | null];
    return code;
  }

  it("passes when the service's ops port answers /healthz with 200, and fails on 503", async () => {
    expect(await healthcheck({ SERVICE: "scheduler", CJS_OPS_PORT: String(await opsServer(200)) })).toBe(0);
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    expect(await healthcheck({ SERVICE: "scheduler", CJS_OPS_PORT: String(await opsServer(503)) })).toBe(1);
  });

  it("fails when nothing listens on the ops port", async () => {
    const port = await opsServer(200);
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    server = undefined;
    expect(await healthcheck({ SERVICE: "billing", CJS_OPS_PORT: String(port) })).toBe(1);
  });

  it("passes for the agent and the CLI, which serve no HTTP: their health is their process", async () => {
    expect(await healthcheck({ SERVICE: "agent" })).toBe(0);
  });

  it("knows each service's default ops port, the one its config uses", () => {
    expect(DEFAULT_OPS_PORTS).toEqual({
      // The gateway's ops port comes with the metrics change (#12 item 4); read loosely until both are merged.
      gateway: (gatewayConfig({}) as { CJS_OPS_PORT?: number }).CJS_OPS_PORT,
      scheduler: schedulerConfig({}).CJS_OPS_PORT,
      "node-registry": nodeRegistryConfig({}).CJS_OPS_PORT,
      "log-relay": logRelayConfig({}).CJS_OPS_PORT,
      billing: billingConfig({}).CJS_OPS_PORT,
      webhooks: webhooksConfig({}).CJS_OPS_PORT,
    });
  });
});
