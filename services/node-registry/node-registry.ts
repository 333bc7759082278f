import { queueGroups } from "../../shared/nats/index.js";
import { type ServiceDeps, serviceLifecycle } from "../../shared/process/index.js";
import type { Service } from "../../shared/runtime/index.js";
import type { NodeRegistryConfig } from "./config.js";
import { deleteNode } from "./delete-node.js";
import { drainNode } from "./drain-node.js";
import { getNode } from "./get-node.js";
import { heartbeat } from "./heartbeat.js";
import { listNodes } from "./list-nodes.js";
import { type LivenessSweep, startLivenessSweep } from "./liveness-sweep.js";
import { registerNode } from "./register-node.js";
import type { RegistryContext } from "./registry-context.js";
import { openRegistryStore } from "./registry-store.js";

const SERVICE = "node-registry";

export interface NodeRegistry extends Service {
  /** Runs one liveness sweep now and answers how many nodes it marked offline (tests, operations). */
  sweepNow(): Promise<number>;
}

/**
 * Builds the node registry, the owner of nodes: registration, heartbeats, liveness,
 * draining and deletion. Node records live in the `cjs_nodes` bucket, which the scheduler watches; every
 * replica sweeps it for nodes that missed their heartbeats and marks them offline, so the
 * scheduler requeues their jobs. The gateway mints node keys.
 */
export function buildNodeRegistry(deps: ServiceDeps<NodeRegistryConfig>): NodeRegistry {
  const { nc, logger, clock, config } = deps;
  let sweep: LivenessSweep | null = null;
  const lifecycle = serviceLifecycle({
    name: SERVICE,
    nc,
    logger,
    queue: queueGroups.nodeRegistry,
    async start(run) {
      const store = await openRegistryStore(nc, { replicas: config.CJS_NATS_REPLICAS, logger });
      // Heartbeats cannot reach a replica that is cut off; after a break every node gets a full window again.
      let listeningSince = clock.now();
      void (async () => {
        for await (const status of nc.status()) if (status.type === "reconnect") listeningSince = clock.now();
      })();
      const ctx: RegistryContext = { nc, config, logger, clock, store, listeningSinceMs: () => listeningSince };
      run.serve("nodeRegister", registerNode(ctx));
      run.serve("nodeHeartbeat", heartbeat(ctx));
      run.serve("nodeDrain", drainNode(ctx));
      run.serve("nodeList", listNodes(ctx));
      run.serve("nodeGet", getNode(ctx));
      run.serve("nodeDelete", deleteNode(ctx));
      sweep = startLivenessSweep(ctx);
    },
    async stop(drain) {
      await drain();
      await sweep?.stop();
    },
  });
  return {
    ...lifecycle,
    sweepNow() {
      if (!sweep) return Promise.reject(new Error("the node registry is not started"));
      return sweep.sweepNow();
    },
  };
}
