import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LOCK_FILE_NAME, lockWorkDir } from "./work-dir-lock.js";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function workDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "cjs-lock-"));
  dirs.push(dir);
  return dir;
}

describe("lockWorkDir", () => {
  it("refuses a second agent while the first holds the work dir, and allows it after the release", async () => {
    const dir = await workDir();
    const release = await lockWorkDir(dir);
    await expect(lockWorkDir(dir)).rejects.toMatchObject({ code: "agent.work_dir_busy" });
    await release();
    await (await lockWorkDir(dir))();
  });

  it("takes over the lock of an agent that is gone", async () => {
    const dir = await workDir();
    // The pid of a process that has exited.
    const gone = spawnSync("true").pid;
    await writeFile(join(dir, LOCK_FILE_NAME), `${gone}\n`);
    const release = await lockWorkDir(dir);
    expect((await readFile(join(dir, LOCK_FILE_NAME), "utf8")).trim()).toBe(String(process.pid));
    await release();
  });
});
