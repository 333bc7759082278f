import { randomUUID } from "node:crypto";
import type { Subscription } from "@nats-io/transport-node";
import { servePing } from "../../shared/nats/index.js";
import type { ServiceDeps } from "../../shared/process/index.js";
import type { Service } from "../../shared/runtime/index.js";
import type { BillingConfig } from "./config.js";
import { startCredit, type CreditParts } from "./credit/start-credit.js";

const SERVICE = "billing";

/**
 * Builds billing, the owner of plans, subscriptions, checkout with the payment provider
 * and the compute-credit ledger, which meters finished jobs.
 */
export function buildBilling(deps: ServiceDeps<BillingConfig>): Service {
  const { nc, logger } = deps;
  const instance = randomUUID();
  let ping: Subscription | null = null;
  let credit: CreditParts | null = null;
  let stopped = false;
  return {
    name: SERVICE,
    async start() {
      credit = await startCredit(deps);
      ping = servePing(nc, { service: SERVICE, instance, logger });
      // Ready only once the server knows the subscription.
      await nc.flush();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await credit?.stop();
      await ping?.drain();
    },
    ready: () => ping !== null && !stopped,
  };
}
