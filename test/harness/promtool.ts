import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** promtool on PATH or where Debian's `prometheus` package puts it; null when absent. */
function findPromtool(): string | null {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/bin", "/usr/local/bin"].filter((dir) => dir !== "");
  for (const dir of dirs) {
    const candidate = join(dir, "promtool");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Runs promtool (installed by `make test-tools`) with `args` in `cwd`, `input` on its standard
 * input; resolves with what it printed, or fails with that output when it exits non-zero.
 */
export async function promtool(
  args: readonly string[],
  options: { cwd?: string; input?: string } = {},
): Promise<string> {
  const bin = findPromtool();
  if (bin === null)
    throw new Error(
      "promtool is not installed: run `make test-tools` or `make test` (deploy/scripts/ensure-promtool.sh installs Debian's prometheus package, which ships it)",
    );
  const child = spawn(bin, args, { cwd: options.cwd, stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stdin.end(options.input ?? "");
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  });
  if (code !== 0) throw new Error(`promtool ${args.join(" ")} exited ${code}:\n${output}`);
  return output;
}
