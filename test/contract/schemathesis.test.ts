import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Runs the contract test to its exit and returns its exit code and everything it wrote. */
function runContractTest(): Promise<{ code: number | null; output: string }> {
  const child = spawn("deploy/scripts/contract-test.sh", [], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, output })));
}

/**
 * `make contract-test` inside the suite: schemathesis (installed by `make test`) with every
 * check against a `make dev` stack of its own, signed in and with an API key. Run here
 * rather than after the suite so that its two minutes, mostly spent waiting on answers,
 * overlap the other files.
 */
describe("the OpenAPI document against the running service", () => {
  it("schemathesis finds no failure with every check, signed in and with an API key", async () => {
    const { code, output } = await runContractTest();
    expect(code, output).toBe(0);
    expect(output).toMatch(/session pass: (\d+) generated, \1 passed/);
    expect(output).toMatch(/api-key pass: (\d+) generated, \1 passed/);
  }, 900_000);
});
