import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

/**
 * The SDK is an npm package of its own: built with its tsconfig, installed by its name in
 * an empty project that has only its one dependency (zod), it imports through its
 * `exports` and carries its type declarations.
 */
const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "../..");
const SDK = join(ROOT, "clients/sdk");
const project = mkdtempSync(join(tmpdir(), "cjs-sdk-package-"));

afterAll(() => rmSync(project, { recursive: true, force: true }));

describe("the SDK package", () => {
  it("builds to ESM with declarations and imports by its name with only zod beside it", async () => {
    const installed = join(project, "node_modules/@compute-job-service/sdk");
    mkdirSync(installed, { recursive: true });
    cpSync(join(SDK, "package.json"), join(installed, "package.json"));
    symlinkSync(join(ROOT, "node_modules/zod"), join(project, "node_modules/zod"));
    await run(process.execPath, [
      join(ROOT, "node_modules/typescript/bin/tsc"),
      "-p",
      join(SDK, "tsconfig.json"),
      "--outDir",
      join(installed, "dist"),
    ]);

    expect(existsSync(join(installed, "dist/clients/sdk/src/index.d.ts"))).toBe(true);
    const script = [
      'import { ComputeJobsClient, ApiError, RPC_ROUTES } from "@compute-job-service/sdk";',
      'const client = new ComputeJobsClient({ baseUrl: "http://127.0.0.1:9", appId: "app" });',
      'console.log(JSON.stringify({ client: typeof client.jobs.submit, error: new ApiError({ code: "x.y", message: "m", status: 400 }).code, submit: RPC_ROUTES.submitJob.path }));',
    ].join("\n");
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: project });

    expect(JSON.parse(stdout)).toEqual({ client: "function", error: "x.y", submit: "/api/compute/jobs/submit" });
  });
});
