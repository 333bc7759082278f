import type { NodeStatus } from "../../shared/contract/index.js";
import { effectiveStatus, heartbeatOverdue } from "./liveness.js";
import { nodesGauge } from "./node-metrics.js";
import { readAllNodes } from "./read-all-nodes.js";
import type { RegistryContext } from "./registry-context.js";

export interface LivenessSweep {
  /** Runs one sweep now (after any in progress) and answers how many nodes it marked offline. */
  sweepNow(): Promise<number>;
  /** Stops the timer and waits for a sweep in progress. */
  stop(): Promise<void>;
}

/**
 * Every replica sweeps on its own timer: no leader. Marking a node offline is a
 * compare-and-set that re-checks the heartbeat, so racing replicas mark it once and a
 * heartbeat that lands first wins.
 */
export function startLivenessSweep(ctx: RegistryContext): LivenessSweep {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  // Sweeps of one replica run one after another.
  let tail: Promise<unknown> = Promise.resolve();

  const sweepNow = (): Promise<number> => {
    const run = tail.then(() => sweepOnce(ctx));
    tail = run.catch(() => {});
    return run;
  };

  const schedule = () => {
    timer = setTimeout(() => {
      sweepNow()
        .catch((error: unknown) => ctx.logger.error({ err: error }, "liveness sweep failed"))
        .finally(() => {
          if (!stopped) schedule();
        });
    }, ctx.config.CJS_LIVENESS_SWEEP_MS);
  };
  schedule();

  return {
    sweepNow,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await tail;
    },
  };
}

async function sweepOnce(ctx: RegistryContext): Promise<number> {
  const nowMs = ctx.clock.now();
  const now = new Date(nowMs).toISOString();
  const counts: Record<NodeStatus, number> = { online: 0, draining: 0, offline: 0 };
  let marked = 0;
  // Nobody is marked offline for heartbeats this replica could not have heard (a NATS outage).
  const heardLongEnough =
    nowMs - ctx.listeningSinceMs() >
    ctx.config.CJS_HEARTBEAT_MISSES_OFFLINE * ctx.config.CJS_HEARTBEAT_INTERVAL_SECONDS * 1000;
  for (const { value: seen } of await readAllNodes(ctx)) {
    let node = seen;
    if (heardLongEnough && seen.offline_at === null && heartbeatOverdue(seen, nowMs, ctx.config)) {
      let wrote = false;
      const stored = await ctx.store.nodes.mutate(seen.node_id, (current) => {
        wrote = current.offline_at === null && heartbeatOverdue(current, nowMs, ctx.config);
        return wrote ? { ...current, offline_at: now, updated_at: now } : undefined;
      });
      if (!stored) continue;
      node = stored.value;
      if (wrote) {
        marked += 1;
        ctx.logger.warn(
          { node_id: node.node_id, business_id: node.business_id, last_heartbeat_at: node.last_heartbeat_at },
          "node missed its heartbeats: offline",
        );
      }
    }
    counts[effectiveStatus(node, nowMs, ctx.config)] += 1;
  }
  for (const [state, count] of Object.entries(counts)) nodesGauge.set({ state }, count);
  return marked;
}
