import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AgentError } from "./agent-error.js";

export const LOCK_FILE_NAME = "agent.lock";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Claims the work dir for this agent: two agents on one state file would run the same
 * node twice. The lock names the holder's pid; a lock whose process is gone (an agent
 * that was killed) is taken over. Returns the release.
 */
export async function lockWorkDir(workDir: string): Promise<() => Promise<void>> {
  const path = join(workDir, LOCK_FILE_NAME);
  for (;;) {
    try {
      await writeFile(path, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
      return () => rm(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const holder = Number((await readFile(path, "utf8").catch(() => "")).trim());
    if (Number.isInteger(holder) && holder > 0 && alive(holder)) {
      throw new AgentError(
        "agent.work_dir_busy",
        `another agent (pid ${holder}) runs in ${workDir}: stop it, or give this one another CJS_WORK_DIR (remove ${path} if that process is no agent)`,
      );
    }
    await rm(path, { force: true });
  }
}
