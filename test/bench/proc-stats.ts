import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** A process whose CPU time and memory the bench reads, by the name its tables use. */
export interface ProcessRef {
  name: string;
  pid: number;
}

let ticksPerSecond: number | undefined;

/** The kernel's clock ticks per second, the unit of /proc/<pid>/stat's CPU times (100 on most Linux systems). */
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/**
 * CPU time the process has used so far, user plus system, over all its threads (JIT, GC
 * and libuv threads included), in ms. The kernel counts in clock ticks: 10 ms steps.
 */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / clockTicks();
}

/** Resident memory of the process now, in bytes (VmRSS). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** CPU ms of each process, by name. */
export function cpuSnapshot(processes: readonly ProcessRef[]): Map<string, number> {
  return new Map(processes.map(({ name, pid }) => [name, cpuMs(pid)]));
}

/** CPU ms each process used between two snapshots. */
export function cpuSince(before: ReadonlyMap<string, number>, processes: readonly ProcessRef[]): Map<string, number> {
  return new Map(processes.map(({ name, pid }) => [name, cpuMs(pid) - (before.get(name) ?? 0)]));
}

/** The pid of the process whose command line contains `fragment` (a file only it was started with), or undefined. */
export function findPidByCommandLine(fragment: string): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
      if (commandLine.includes(fragment)) return Number(entry);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return undefined;
}
