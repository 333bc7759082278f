import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Agent, buildAgent, loadConfig as loadAgentConfig } from "../../clients/agent/index.js";
import { requestRpc } from "../../shared/nats/index.js";
import { randomBase62, systemClock } from "../../shared/runtime/index.js";
import { ComputeClient } from "../harness/client.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { startSystem, type RunningSystem } from "../harness/system.js";

/**
 * The TypeScript examples of README.md and docs/sdk.md, as printed: each is type-checked
 * (tsc, the repository's settings) and run (tsx) against a real stack shaped like `make
 * dev`'s (app `local`, `admin@localhost` of the operator's business, an agent of the
 * `default` pool that really runs the jobs). Only the address and the password differ from
 * `make dev`'s: the examples' `http://localhost:8080` and `<password from make dev>` are
 * replaced by this stack's. A printed `// expected output` comment after a `console.log` is
 * checked against what the example printed (`…` stands for any text).
 */
const REPO = fileURLToPath(new URL("../..", import.meta.url));
const PAGES = ["README.md", "docs/sdk.md"];
const PASSWORD = `pw-${randomBase62(20)}`;

let nats: NatsHarness;
let system: RunningSystem;
let agent: Agent;
let baseUrl: string;
let apiKey: string;
let dir: string;

interface Snippet {
  page: string;
  index: number;
  file: string;
  source: string;
}
let snippets: Snippet[];

/** Every ```ts block of a Markdown page. */
function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

function run(
  command: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { cwd: dir, env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 });
  const gateway = system.gateways[0]!;
  baseUrl = gateway.baseUrl;
  await requestRpc(gateway.nc, "adminAppCreate", { id: "local", name: "Local" });
  const business = await requestRpc(gateway.nc, "adminBusinessCreate", {
    app_id: "local",
    name: "Operator",
    operator: true,
  });
  const admin = {
    app_id: "local",
    business_id: business.business_id,
    email: "admin@localhost",
    role: "admin" as const,
  };
  await requestRpc(gateway.nc, "adminUserCreate", { ...admin, password: PASSWORD });
  const anonymous = new ComputeClient({ baseUrl, appId: "local" });
  const tokens = await anonymous.call("login", { email: "admin@localhost", password: PASSWORD });
  const session = anonymous.with({ accessToken: tokens.access_token });
  apiKey = (await session.call("createApiKey", { name: "snippets" })).key;

  dir = await mkdtemp(join(tmpdir(), "cjs-snippets-"));
  agent = buildAgent({
    config: loadAgentConfig({
      CJS_GATEWAY_URL: baseUrl,
      CJS_APP_ID: "local",
      CJS_API_KEY: apiKey,
      CJS_POOL: "default",
      CJS_SLOTS: "2",
      CJS_WORK_DIR: join(dir, "agent"),
    }),
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
    clock: systemClock,
    env: process.env,
  });
  await agent.start();

  // A folder shaped like the repository's root, where an example's imports resolve as they do there.
  for (const name of ["clients", "shared", "node_modules"]) await symlink(join(REPO, name), join(dir, name));
  await writeFile(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  await writeFile(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      extends: join(REPO, "tsconfig.json"),
      compilerOptions: {
        noEmit: true,
        rootDir: "/",
        // The package's name, as a project that installed it imports it.
        paths: { "@compute-job-service/sdk": ["./clients/sdk/src/index.ts"] },
      },
      include: ["snippet-*.ts"],
    }),
  );
  // The pair the session example reads back, as a program that signed in earlier kept it.
  await writeFile(join(dir, "tokens.json"), JSON.stringify(tokens));

  snippets = [];
  for (const page of PAGES) {
    const blocks = tsBlocks(await readFile(join(REPO, page), "utf8"));
    blocks.forEach((source, index) => {
      const file = `snippet-${page.replace(/\W/g, "-")}-${index + 1}.ts`;
      snippets.push({ page, index: index + 1, file, source });
    });
  }
  for (const snippet of snippets) {
    const here = snippet.source
      .replaceAll("http://localhost:8080", baseUrl)
      .replaceAll("<password from make dev>", PASSWORD);
    await writeFile(join(dir, snippet.file), here);
  }
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await system?.stop();
  await nats?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the SDK examples of the README and docs/sdk.md", () => {
  it("are found: the README's one and the SDK page's", () => {
    expect(snippets.filter((snippet) => snippet.page === "README.md")).toHaveLength(1);
    expect(snippets.filter((snippet) => snippet.page === "docs/sdk.md").length).toBeGreaterThanOrEqual(3);
  });

  it("type-check as printed", async () => {
    const checked = await run([join(REPO, "node_modules/.bin/tsc"), "-p", "tsconfig.json"]);
    expect(checked.stdout + checked.stderr).toBe("");
    expect(checked.code).toBe(0);
  });

  it("run against the stack, and print what their comments say", async () => {
    for (const snippet of snippets) {
      const where = `${snippet.page}, TypeScript example ${snippet.index}`;
      const ran = await run([process.execPath, "--import", "tsx", snippet.file], {
        CJS_PASSWORD: PASSWORD,
        CJS_API_KEY: apiKey,
      });
      expect(ran.code, `${where}: ${ran.stderr}`).toBe(0);
      for (const [, expected] of snippet.source.matchAll(/console\.log\(.*\);\s*\/\/ (.+)$/gm)) {
        const pattern = expected!.split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
        expect(ran.stdout, where).toMatch(new RegExp(`^${pattern.join("\\S*")}$`, "m"));
      }
    }
  });
});
