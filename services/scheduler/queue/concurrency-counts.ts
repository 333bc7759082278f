import type { Subscription } from "@nats-io/transport-node";
import { queueGroups, requestRpc, serveRpc } from "../../../shared/nats/index.js";
import type { SchedulerContext } from "../scheduler-context.js";
import type { ConcurrencyGate } from "./concurrency-keys.js";

type CountingContext = Pick<SchedulerContext, "nc" | "instance" | "concurrency" | "ownership">;

const ASK_TIMEOUT_MS = 2000;

/**
 * How many jobs of a concurrency key are assigned or running. Every keyed job of a business
 * is in one partition (`taggedJobId`), so its owner counts them all: counted here when this
 * replica owns it, else asked of the owner. Null when no replica owns it now (being handed
 * over) or the owner did not answer.
 */
export async function concurrencyInUse(ctx: CountingContext, gate: ConcurrencyGate): Promise<number | null> {
  const { partition } = gate;
  if (ctx.ownership.owned.has(partition)) return ctx.concurrency.inUse(gate.scope);
  const owner = ctx.ownership.ownerOf(partition);
  if (owner === undefined || owner === ctx.instance) return null;
  const reply = await requestRpc(
    ctx.nc,
    "concurrencyInUse",
    { scope: gate.scope, partition },
    { address: owner, timeoutMs: ASK_TIMEOUT_MS },
  ).catch(() => null);
  return reply?.owned ? reply.in_use : null;
}

/** Answers the other replicas' `concurrencyInUse` for the keys of this replica's partitions. */
export function serveConcurrencyCounts(ctx: CountingContext & Pick<SchedulerContext, "logger">): Subscription {
  return serveRpc(ctx.nc, "concurrencyInUse", {
    address: ctx.instance,
    queue: queueGroups.scheduler,
    logger: ctx.logger,
    handle: async ({ scope, partition }) => ({
      in_use: ctx.concurrency.inUse(scope),
      owned: ctx.ownership.owned.has(partition),
    }),
  });
}
