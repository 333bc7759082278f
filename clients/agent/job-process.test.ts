import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { JobProcess } from "./job-process.js";
import { groupAlive } from "./proc.js";

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

async function run(command: string[]) {
  const output: Array<[string, string]> = [];
  const child = await JobProcess.start(command, {
    cwd: tmpdir(),
    env,
    onOutput: (stream, chunk) => output.push([stream, chunk.toString()]),
  });
  return { child, output };
}

describe("JobProcess", () => {
  it("keeps the output of a command that exits at once", async () => {
    const { child, output } = await run(["sh", "-c", "echo out; echo err >&2; exit 3"]);
    const { status } = await child.finish(1_000);
    expect(status).toEqual({ code: 3, signal: null });
    expect(output.sort()).toEqual([
      ["stderr", "err\n"],
      ["stdout", "out\n"],
    ]);
  });

  it("runs argv as given, with no shell in between", async () => {
    const { child, output } = await run(["echo", "$HOME", "a;b"]);
    await child.finish(1_000);
    expect(output).toEqual([["stdout", "$HOME a;b\n"]]);
  });

  it("rejects a command that cannot start", async () => {
    await expect(run(["/nonexistent/program"])).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("kills the whole tree, SIGKILLing what ignores SIGTERM after the grace", async () => {
    // "ready" only once the trap is set: a SIGTERM before it would end the shell at once.
    const { child, output } = await run(["sh", "-c", "trap '' TERM; sleep 300 & sleep 300 & echo ready; wait; wait"]);
    await expect.poll(() => output.map(([, chunk]) => chunk).join("")).toContain("ready");
    await child.kill(300);
    const { status } = await child.finish(300);
    // Killed by SIGKILL, so SIGTERM (which the whole group ignores) did not end it: the grace ran out.
    expect(status.signal).toBe("SIGKILL");
    await expect.poll(() => groupAlive(child.pgid)).toBe(false);
  });

  it("stops what a command left running in its group when it exits", async () => {
    const { child } = await run(["sh", "-c", "sleep 300 > /dev/null 2>&1 & echo started"]);
    const { status, leftovers } = await child.finish(1_000);
    expect({ status, leftovers }).toEqual({ status: { code: 0, signal: null }, leftovers: true });
    await expect.poll(() => groupAlive(child.pgid)).toBe(false);
  });
});
