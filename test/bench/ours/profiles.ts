import { readdir, readFile } from "node:fs/promises";
import { type CpuProfile, profileTables, summariseProfile, type TimeWindow } from "../cpu-profile.js";
import type { ResultTable } from "../scenario.js";
import type { OurSystem } from "./system.js";

/** The profile of each profiled service (its main thread) over `windows`, the bursts it describes as `what`. */
export async function profileSummaries(
  ours: Pick<OurSystem, "cpuProfiles">,
  windows: readonly TimeWindow[],
  what: string,
): Promise<ResultTable[]> {
  const tables: ResultTable[] = [];
  const seconds = windows.reduce((sum, window) => sum + (window.endMs - window.startMs), 0) / 1000;
  const describe = `the ${windows.length} ${what} (${seconds.toFixed(1)} s, first submit to last completion), profiled by node --cpu-prof: profiling slows the process, so this run's other figures do not compare with unprofiled runs`;
  for (const [service, dir] of ours.cpuProfiles) {
    let profile: CpuProfile;
    let file = dir;
    try {
      // Node names each profile CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; the main thread's id is 0.
      const main = (await readdir(dir)).find((name) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(name));
      if (!main) throw new Error("no profile of the main thread");
      file = `${dir}/${main}`;
      profile = JSON.parse(await readFile(file, "utf8")) as CpuProfile;
    } catch (error) {
      tables.push({
        title: `(profile) ${service}: no profile`,
        columns: [],
        rows: [],
        notes: [`${file}: ${error instanceof Error ? error.message : String(error)}`],
      });
      continue;
    }
    tables.push(...profileTables(service, summariseProfile(profile, windows), `${describe}; ${file}`));
  }
  return tables;
}
