import { randomUUID } from "node:crypto";
import type { Subscription } from "@nats-io/transport-node";
import { servePing } from "../../shared/nats/index.js";
import type { ServiceDeps } from "../../shared/process/index.js";
import type { Service } from "../../shared/runtime/index.js";
import type { LogRelayConfig } from "./config.js";

const SERVICE = "log-relay";

/**
 * Builds the log relay, the owner of job log lines: it stores the nodes' idempotent,
 * sequence-numbered log batches in a stream keyed by job and serves replay plus live
 * tail to the gateway's SSE.
 * For now it only answers its ping.
 */
export function buildLogRelay(deps: ServiceDeps<LogRelayConfig>): Service {
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
