import { randomUUID } from "node:crypto";
import type { Subscription } from "@nats-io/transport-node";
import { servePing } from "../../shared/nats/index.js";
import type { ServiceDeps } from "../../shared/process/index.js";
import type { Service } from "../../shared/runtime/index.js";
import type { NodeRegistryConfig } from "./config.js";

const SERVICE = "node-registry";

/**
 * Builds the node registry, the owner of nodes: registration, node keys, heartbeats,
 * liveness and draining. Liveness lives in a JetStream KV bucket; a node that misses
 * its heartbeats is declared lost so the scheduler requeues its jobs.
 * For now it only answers its ping.
 */
export function buildNodeRegistry(deps: ServiceDeps<NodeRegistryConfig>): Service {
  const { nc, logger } = deps;
  const instance = randomUUID();
  let ping: Subscription | null = null;
  let stopped = false;
  return {
    name: SERVICE,
    async start() {
      ping = servePing(nc, { service: SERVICE, instance, logger });
      // Ready only once the server knows the subscription.
      await nc.flush();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await ping?.drain();
    },
    ready: () => ping !== null && !stopped,
  };
}
