/**
 * Processes that outlive the command that started them: detached, in their own process
 * group, output appended to their log file. A recorded pid is only signalled while
 * `/proc/<pid>/environ` still carries the process's identity, never a stranger that
 * reused the number.
 */
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { IDENTITY_VARIABLE, type ProcessSpec } from "./layout.js";

const POLL_MS = 100;

/** Starts `spec` detached (writing its config files first) and returns its pid. */
export function spawnDetached(spec: ProcessSpec, baseEnv: Record<string, string | undefined>): number {
  for (const file of spec.files) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.text);
  }
  mkdirSync(dirname(spec.log), { recursive: true });
  const out = openSync(spec.log, "a");
  try {
    const child = spawn(spec.command, spec.args, {
      detached: true,
      stdio: ["ignore", out, out],
      env: { ...baseEnv, ...spec.env },
    });
    if (child.pid === undefined) throw new Error(`could not start ${spec.name} (${spec.command})`);
    child.unref();
    return child.pid;
  } finally {
    closeSync(out);
  }
}

/** True while `pid` runs and is the process named by `identity` (`<state dir>#<name>`). */
export function isOurs(pid: number, identity: string): boolean {
  try {
    const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    const state = readFileSync(`/proc/${pid}/stat`, "utf8");
    // A zombie (state Z, after the comm in parentheses) has exited; only its parent's wait is missing.
    if (/\)\s+Z\s/.test(state)) return false;
    return environ.includes(`${IDENTITY_VARIABLE}=${identity}`);
  } catch {
    return false;
  }
}

export function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/** Waits until none of `victims` runs, for at most `timeoutMs`; returns those still running. */
export async function waitForExit<T extends { pid: number; identity: string }>(
  victims: readonly T[],
  timeoutMs: number,
): Promise<T[]> {
  const deadline = Date.now() + timeoutMs;
  let running = victims.filter((victim) => isOurs(victim.pid, victim.identity));
  while (running.length > 0 && Date.now() < deadline) {
    await delay(POLL_MS);
    running = running.filter((victim) => isOurs(victim.pid, victim.identity));
  }
  return running;
}

/** SIGTERM, then SIGKILL for those still running after `graceMs`. Returns the names that needed the SIGKILL. */
export async function terminate<T extends { pid: number; identity: string }>(
  victims: readonly T[],
  graceMs: number,
): Promise<T[]> {
  for (const victim of victims) if (isOurs(victim.pid, victim.identity)) kill(victim.pid, "SIGTERM");
  const stubborn = await waitForExit(victims, graceMs);
  for (const victim of stubborn) kill(victim.pid, "SIGKILL");
  await waitForExit(stubborn, graceMs);
  return stubborn;
}

/** The identity a spec's process carries in its environment. */
export function identityOf(spec: ProcessSpec): string {
  return spec.env[IDENTITY_VARIABLE]!;
}
