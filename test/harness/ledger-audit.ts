import { jetstreamManager } from "@nats-io/jetstream";
import { expect } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { BUCKETS, CONSUMERS } from "../../shared/nats/index.js";

/** Every job record revision so far has been through the ledger audit, which charges what metering missed. */
export async function waitUntilAudited(nc: NatsConnection): Promise<void> {
  const jsm = await jetstreamManager(nc);
  await expect
    .poll(
      async () => {
        const info = await jsm.consumers.info(`KV_${BUCKETS.jobs}`, CONSUMERS.billingLedgerAudit);
        return info.num_pending + info.num_ack_pending;
      },
      { timeout: 30_000, interval: 50 },
    )
    .toBe(0);
}
