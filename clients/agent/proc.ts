import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";

/** The fields of `/proc/<pid>/stat` the agent reads. Times are in clock ticks. */
export interface ProcStat {
  pid: number;
  /** `R`, `S`, `D`, `Z` (zombie), … */
  state: string;
  pgrp: number;
  utimeTicks: number;
  stimeTicks: number;
  startTicks: number;
}

/** Linux's USER_HZ: the unit of the times in `/proc/<pid>/stat` on every mainstream architecture. */
export const CLOCK_TICKS_PER_SECOND = 100;

const PROC_ROOT = "/proc";

/** Whether this machine has a Linux `/proc` to sample. */
export function procAvailable(): boolean {
  return existsSync(`${PROC_ROOT}/self/stat`);
}

/** Parses one `/proc/<pid>/stat` line; the command name may itself hold spaces and parentheses. */
export function parseStat(text: string): ProcStat | null {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  // Fields from 3 (state) on; field n is rest[n - 3].
  const rest = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  const field = (n: number) => Number(rest[n - 3]);
  const pid = Number(text.slice(0, open).trim());
  const stat = {
    pid,
    state: rest[0] ?? "?",
    pgrp: field(5),
    utimeTicks: field(14),
    stimeTicks: field(15),
    startTicks: field(22),
  };
  return [stat.pid, stat.pgrp, stat.utimeTicks, stat.stimeTicks, stat.startTicks].every(Number.isFinite) ? stat : null;
}

export async function readStat(pid: number): Promise<ProcStat | null> {
  try {
    return parseStat(await readFile(`${PROC_ROOT}/${pid}/stat`, "utf8"));
  } catch {
    return null;
  }
}

/**
 * Every process of a process group that is still alive (zombies excluded: they have
 * ended, and a container's init may never reap them). Null when there is no `/proc`.
 */
export async function processGroupMembers(pgid: number): Promise<ProcStat[] | null> {
  let entries: string[];
  try {
    entries = await readdir(PROC_ROOT);
  } catch {
    return null;
  }
  const stats = await Promise.all(entries.filter((name) => /^\d+$/.test(name)).map((name) => readStat(Number(name))));
  return stats.filter(
    (stat): stat is ProcStat => stat !== null && stat.pgrp === pgid && stat.state !== "Z" && stat.state !== "X",
  );
}

/** `VmRSS` and `VmHWM` (peak resident set) of a process, in kB; null once it is gone. */
export async function readMemoryKb(pid: number): Promise<{ rssKb: number; peakKb: number } | null> {
  let text: string;
  try {
    text = await readFile(`${PROC_ROOT}/${pid}/status`, "utf8");
  } catch {
    return null;
  }
  const value = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, "m").exec(text)?.[1] ?? 0);
  return { rssKb: value("VmRSS"), peakKb: value("VmHWM") };
}

/** Whether any live process is left in the group. */
export async function groupAlive(pgid: number): Promise<boolean> {
  const members = await processGroupMembers(pgid);
  if (members !== null) return members.length > 0;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** Sends a signal to a whole process group; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}
