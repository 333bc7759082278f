import type { z } from "zod";
import {
  type HeartbeatCommand,
  type HeartbeatResponse,
  isTerminal,
  type RunningAttempt,
  type StopOrder,
} from "../../shared/contract/index.js";
import { type AllocationRecord, jobKey, type NodeRecord } from "../../shared/records/index.js";
import { mutateOwnedNode } from "./owned-node.js";
import type { RegistryContext } from "./registry-context.js";

/**
 * `nodes heartbeat`: the node is alive (an offline node is online again), and it learns which
 * of the attempts it runs it must stop. Idempotent: a resend records the same life sign and
 * computes the same orders from the job records.
 */
export function heartbeat(ctx: RegistryContext) {
  return async ({ caller, body }: z.infer<typeof HeartbeatCommand>): Promise<HeartbeatResponse> => {
    const now = new Date(ctx.clock.now()).toISOString();
    const node = await mutateOwnedNode(ctx, caller, caller.node_id, (current) => ({
      ...current,
      last_heartbeat_at: now,
      offline_at: null,
      updated_at: now,
    }));
    const allocation = await ctx.store.allocations.get(node.node_id);
    const orders = await Promise.all(
      body.running.map((running) => stopOrder(ctx, node, allocation?.value ?? null, running)),
    );
    return {
      stop: orders.filter((order): order is StopOrder => order !== null),
      draining: node.draining,
      heartbeat_interval_seconds: ctx.config.CJS_HEARTBEAT_INTERVAL_SECONDS,
    };
  };
}

/** Why the node must stop this attempt, or null when the job record says it is still the node's to run. */
async function stopOrder(
  ctx: RegistryContext,
  node: NodeRecord,
  allocation: AllocationRecord | null,
  running: RunningAttempt,
): Promise<StopOrder | null> {
  // An operator node runs other businesses' jobs: the scheduler's allocation names their keys.
  // A job it no longer lists is looked up in the node's own business.
  const key = allocation?.attempts[running.job_id]?.job_key ?? jobKey(node.app_id, node.business_id, running.job_id);
  const job = await ctx.store.jobs.get(key);
  const stop = (reason: string): StopOrder => ({ job_id: running.job_id, attempt: running.attempt, reason });
  if (!job) return stop("unknown");
  if (isTerminal(job.value.state)) return stop(job.value.state);
  if (job.value.attempt !== running.attempt || job.value.node_id !== node.node_id) return stop("reassigned");
  return null;
}
