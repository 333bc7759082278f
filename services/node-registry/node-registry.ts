import { randomUUID } from "node:crypto";
import type { Subscription } from "@nats-io/transport-node";
import { queueGroups, serveRpc, servePing } from "../../shared/nats/index.js";
import type { ServiceDeps } from "../../shared/process/index.js";
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
  const instance = randomUUID();
  const subscriptions: Subscription[] = [];
  let sweep: LivenessSweep | null = null;
  let started = false;
  let stopped = false;
  return {
    name: SERVICE,
    async start() {
      const store = await openRegistryStore(nc, { replicas: config.CJS_NATS_REPLICAS, logger });
      // Heartbeats cannot reach a replica that is cut off; after a break every node gets a full window again.
      let listeningSince = clock.now();
      void (async () => {
        for await (const status of nc.status()) if (status.type === "reconnect") listeningSince = clock.now();
      })();
      const ctx: RegistryContext = { nc, config, logger, clock, store, listeningSinceMs: () => listeningSince };
      const rpc = { queue: queueGroups.nodeRegistry, logger };
      subscriptions.push(
        servePing(nc, { service: SERVICE, instance, logger }),
        serveRpc(nc, "nodeRegister", { ...rpc, handle: registerNode(ctx) }),
        serveRpc(nc, "nodeHeartbeat", { ...rpc, handle: heartbeat(ctx) }),
        serveRpc(nc, "nodeDrain", { ...rpc, handle: drainNode(ctx) }),
        serveRpc(nc, "nodeList", { ...rpc, handle: listNodes(ctx) }),
        serveRpc(nc, "nodeGet", { ...rpc, handle: getNode(ctx) }),
        serveRpc(nc, "nodeDelete", { ...rpc, handle: deleteNode(ctx) }),
      );
      sweep = startLivenessSweep(ctx);
      // Ready only once the server knows the subscriptions.
      await nc.flush();
      started = true;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.all(subscriptions.map((subscription) => subscription.drain()));
      await sweep?.stop();
    },
    ready: () => started && !stopped,
    sweepNow() {
      if (!sweep) return Promise.reject(new Error("the node registry is not started"));
      return sweep.sweepNow();
    },
  };
}
