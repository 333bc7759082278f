import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Agent, buildAgent, loadConfig as loadAgentConfig } from "../../clients/agent/index.js";
import { systemClock } from "../../shared/runtime/index.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

/**
 * The SDK as its users get it: `npm pack` (its prepack builds it), the tarball installed in
 * an empty project, its types checked there without @types/node (as in a browser), loaded
 * as ESM and as CommonJS, and the example of its README type-checked and run against the
 * real stack with an agent, so a job really runs.
 */
const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "../..");
const SDK = join(ROOT, "clients/sdk");
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");
const work = mkdtempSync(join(tmpdir(), "cjs-sdk-package-"));
const project = join(work, "project");

let tarball: string;
let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let agent: Agent;

/** The first ```ts block of the SDK's README. */
function readmeExample(): string {
  const readme = readFileSync(join(SDK, "README.md"), "utf8");
  const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  if (example === undefined) throw new Error("clients/sdk/README.md has no ```ts example");
  return example;
}

function tsconfig(types: string[], lib: string[]): string {
  return JSON.stringify({
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      lib,
      types,
      strict: true,
      noEmit: true,
      skipLibCheck: false,
    },
  });
}

/** tsc over `config` in the project; fails with tsc's own report. */
async function typeCheck(config: string): Promise<void> {
  try {
    await run(process.execPath, [TSC, "-p", config], { cwd: project });
  } catch (error) {
    throw new Error(`tsc -p ${config} failed:\n${(error as { stdout?: string }).stdout ?? ""}`, { cause: error });
  }
}

beforeAll(async () => {
  mkdirSync(project);
  await run("npm", ["pack", "--silent", "--pack-destination", work], { cwd: SDK });
  tarball = join(work, readdirSync(work).find((name) => name.endsWith(".tgz"))!);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "empty", private: true, type: "module" }));
  await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball], {
    cwd: project,
  });
}, 180_000);

afterAll(async () => {
  await agent?.stop();
  await system?.stop();
  await nats?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe("the SDK package", () => {
  it("packs its README, LICENSE and built files, and none of the service's internal contract", async () => {
    const { stdout } = await run("tar", ["-tzf", tarball]);
    const files = stdout.trim().split("\n").sort();
    expect(files).toEqual([
      "package/LICENSE",
      "package/README.md",
      "package/dist/index.cjs",
      "package/dist/index.d.cts",
      "package/dist/index.d.ts",
      "package/dist/index.js",
      "package/package.json",
    ]);
    const manifest = JSON.parse(
      readFileSync(join(project, "node_modules/@compute-job-service/sdk/package.json"), "utf8"),
    );
    expect(manifest).toMatchObject({ license: "MIT", engines: { node: expect.any(String) } });
    expect(manifest.repository.directory).toBe("clients/sdk");
    const types = readFileSync(join(project, "node_modules/@compute-job-service/sdk/dist/index.d.ts"), "utf8");
    expect(types).not.toMatch(/from "node:|UserContext|CreateWebhookCommand/);
  });

  it("type-checks in a project with no @types/node (a browser's libraries only)", async () => {
    writeFileSync(
      join(project, "browser.ts"),
      [
        'import { ApiError, ComputeJobsClient, type ArtifactBody, type LogStreamItem } from "@compute-job-service/sdk";',
        'const client = new ComputeJobsClient({ baseUrl: "https://api.example", appId: "app", credentials: { apiKey: "k" } });',
        'const body: ArtifactBody = new Blob(["x"]);',
        "export const used: [ComputeJobsClient, ArtifactBody, typeof ApiError, LogStreamItem | undefined] = [client, body, ApiError, undefined];",
      ].join("\n"),
    );
    writeFileSync(join(project, "tsconfig.browser.json"), tsconfig([], ["ES2022", "DOM", "DOM.Iterable"]));
    const browser = JSON.parse(readFileSync(join(project, "tsconfig.browser.json"), "utf8"));
    writeFileSync(join(project, "tsconfig.browser.json"), JSON.stringify({ ...browser, files: ["browser.ts"] }));
    await typeCheck("tsconfig.browser.json");
  });

  it("loads as ESM and as CommonJS", async () => {
    const use =
      'const client = new ComputeJobsClient({ baseUrl: "http://127.0.0.1:9", appId: "app" }); console.log(typeof client.jobs.submit, new ApiError({ code: "x.y", message: "m", status: 400 }).code);';
    const esm = await run(
      process.execPath,
      ["--input-type=module", "-e", `import { ApiError, ComputeJobsClient } from "@compute-job-service/sdk"; ${use}`],
      { cwd: project },
    );
    const cjs = await run(
      process.execPath,
      [
        "--input-type=commonjs",
        "-e",
        `const { ApiError, ComputeJobsClient } = require("@compute-job-service/sdk"); ${use}`,
      ],
      { cwd: project },
    );
    expect(esm.stdout.trim()).toBe("function x.y");
    expect(cjs.stdout.trim()).toBe("function x.y");
  });

  it("runs its README's example against the service: a job's log, its end, its artifact and a refusal", async () => {
    writeFileSync(join(project, "example.ts"), readmeExample());
    mkdirSync(join(project, "node_modules/@types"), { recursive: true });
    symlinkSync(join(ROOT, "node_modules/@types/node"), join(project, "node_modules/@types/node"));
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({ ...JSON.parse(tsconfig(["node"], ["ES2022"])), files: ["example.ts"] }),
    );
    await typeCheck("tsconfig.json");

    nats = await startNats();
    system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 });
    const baseUrl = system.gateways[0]!.baseUrl;
    // The operator's business: its jobs go to the operator pool `default`, where the agent runs them unbilled.
    tenant = await createTenant(system.gateways[0]!.nc, { operator: true });
    const { client } = await signedInClient(baseUrl, tenant);
    const apiKey = (await client.call("createApiKey", { name: "agent" })).key;
    agent = buildAgent({
      config: loadAgentConfig({
        CJS_GATEWAY_URL: baseUrl,
        CJS_APP_ID: tenant.app.app_id,
        CJS_API_KEY: apiKey,
        CJS_POOL: "default",
        CJS_SLOTS: "1",
        CJS_WORK_DIR: join(work, "agent"),
      }),
      logger: pino({ level: "silent" }),
      clock: systemClock,
      env: process.env,
    });
    await agent.start();

    // Node.js 24 runs the TypeScript example as it is (type stripping).
    const child = spawn(process.execPath, ["example.ts"], {
      cwd: project,
      env: {
        ...process.env,
        CJS_URL: baseUrl,
        CJS_APP_ID: tenant.app.app_id,
        CJS_EMAIL: tenant.user.email,
        CJS_PASSWORD: tenant.password,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = await once(child, "exit");
    expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout.trim().split("\n")).toEqual([
      "stdout: hello",
      "ended succeeded",
      "state succeeded, exit code 0",
      "out.txt: data",
      "refused: 404 resource.not_found",
    ]);
  }, 120_000);
});
