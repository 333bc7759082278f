/** Stopping the recorded cluster: agents first (they drain), then the load balancer, the services, NATS last. */
import { identityOf, isOurs, terminate } from "./daemon.js";
import type { ClusterState, ProcessRecord } from "./state.js";

/** SIGTERM, then SIGKILL after this long. Agents drain their running jobs within it. */
export const STOP_GRACE_MS = 15_000;
const ORDER: readonly ProcessRecord["kind"][] = ["agent", "lb", "service", "nats"];

export function running(state: ClusterState): ProcessRecord[] {
  return state.processes.filter((record) => isOurs(record.pid, identityOf(record)));
}

export interface StopOutcome {
  stopped: string[];
  /** Those that ignored SIGTERM for the grace period. */
  killed: string[];
}

export async function stopCluster(state: ClusterState, say: (line: string) => void): Promise<StopOutcome> {
  const outcome: StopOutcome = { stopped: [], killed: [] };
  for (const kind of ORDER) {
    const victims = running(state)
      .filter((record) => record.kind === kind)
      .map((record) => ({ name: record.name, pid: record.pid, identity: identityOf(record) }));
    if (victims.length === 0) continue;
    say(`  stopping ${victims.map((victim) => `${victim.name} (pid ${victim.pid})`).join(", ")}`);
    const stubborn = await terminate(victims, STOP_GRACE_MS);
    outcome.stopped.push(...victims.map((victim) => victim.name));
    outcome.killed.push(...stubborn.map((victim) => victim.name));
  }
  return outcome;
}
