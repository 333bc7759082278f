import { randomUUID } from "node:crypto";
import type { Subscription } from "@nats-io/transport-node";
import { servePing } from "../../shared/nats/index.js";
import type { ServiceDeps } from "../../shared/process/index.js";
import type { Service } from "../../shared/runtime/index.js";
import type { SchedulerConfig } from "./config.js";

const SERVICE = "scheduler";

/**
 * Builds the scheduler, the owner of jobs. It consumes the job stream with work-queue
 * semantics, so each submitted job is taken by exactly one replica; it places jobs on
 * live nodes with compare-and-set on the job record (each assignment a new `attempt`),
 * times them out, cancels and retries them, and requeues jobs whose lease expired.
 * For now it only answers its ping.
 */
export function buildScheduler(deps: ServiceDeps<SchedulerConfig>): Service {
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
