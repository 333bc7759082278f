/**
 * How the soak's placements spread over the scheduler replicas: each replica's
 * `cjs_scheduler_placements_total`, sampled through the run. A replica killed and started
 * again counts from zero, so a sample below the last one is a restart and counts whole.
 */
import type { ClusterState } from "../state.js";

const PLACEMENTS = "cjs_scheduler_placements_total";

/** Placements each replica made since the first sample, by process name. */
export class PlacementSpread {
  readonly placed = new Map<string, number>();
  private readonly last = new Map<string, number>();

  /** Adds one reading of a replica's counter (undefined: it did not answer, as while it is down). */
  record(replica: string, value: number | undefined): void {
    if (value === undefined) return;
    const last = this.last.get(replica);
    if (last !== undefined)
      this.placed.set(replica, (this.placed.get(replica) ?? 0) + (value < last ? value : value - last));
    else this.placed.set(replica, this.placed.get(replica) ?? 0);
    this.last.set(replica, value);
  }

  /** Replicas that placed nothing over the run: placement did not spread to them. */
  idle(): string[] {
    return [...this.placed].filter(([, count]) => count === 0).map(([replica]) => replica);
  }
}

/** Each scheduler replica's `/metrics` URL, by process name. */
export function schedulerMetricsUrls(state: ClusterState): Map<string, string> {
  return new Map(
    state.processes
      .filter(
        (record) => record.kind === "service" && record.name.startsWith("scheduler-") && record.ready.kind === "http",
      )
      .map((record) => [record.name, (record.ready as { url: string }).url.replace(/\/readyz$/, "/metrics")]),
  );
}

/** The counter's value in a Prometheus text exposition, or undefined when absent. */
export function placementsIn(exposition: string): number | undefined {
  const line = exposition.split("\n").find((row) => row.startsWith(`${PLACEMENTS} `));
  return line === undefined ? undefined : Number(line.slice(PLACEMENTS.length + 1));
}

/** Reads every replica once into `spread`; a replica that does not answer (killed just now) is skipped. */
export async function samplePlacements(spread: PlacementSpread, urls: ReadonlyMap<string, string>): Promise<void> {
  await Promise.all(
    [...urls].map(async ([replica, url]) => {
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
        spread.record(replica, response.ok ? placementsIn(await response.text()) : undefined);
      } catch {
        spread.record(replica, undefined);
      }
    }),
  );
}
