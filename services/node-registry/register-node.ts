import type { z } from "zod";
import type { ServedRequest } from "../../shared/nats/index.js";
import type { RegisterNodeCommand, RegisterNodeReply } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { isOperatorPool, type NodeRecord, operatorPoolKey, selfHostedPoolKey } from "../../shared/records/index.js";
import { newId } from "../../shared/runtime/index.js";
import { toNodeSummary } from "./node-summary.js";
import type { RegistryContext } from "./registry-context.js";

/**
 * `nodes register`: records a new node. A pool id that is not an operator pool names a
 * self-hosted pool of the caller's business, which comes into being with its first node.
 * The gateway mints the node's key and adds it to the answer.
 */
export function registerNode(ctx: RegistryContext) {
  return async (
    { caller, body }: z.infer<typeof RegisterNodeCommand>,
    { log }: ServedRequest,
  ): Promise<RegisterNodeReply> => {
    const operatorPool = isOperatorPool(ctx.config, body.pool_id);
    // Operator pools serve every business of the application (of every application when shared): only an admin of an operator business adds to them.
    if (operatorPool && !(caller.operator && caller.role === "admin")) {
      throw new AppError(
        "permission.denied",
        `Only an operator admin may add nodes to the operator pool ${body.pool_id}.`,
      );
    }
    const now = new Date(ctx.clock.now()).toISOString();
    const node: NodeRecord = {
      node_id: newId("nod"),
      app_id: caller.app_id,
      business_id: caller.business_id,
      user_id: caller.user_id,
      name: body.name,
      hostname: body.hostname,
      pool_id: body.pool_id,
      pool_key: operatorPool
        ? operatorPoolKey(caller.app_id, body.pool_id, ctx.config.CJS_SHARED_OPERATOR_POOLS)
        : selfHostedPoolKey(caller.business_id, body.pool_id),
      labels: body.labels,
      capacity: body.capacity,
      job_types: body.job_types,
      // The registering key's quotas become the node's caps; its own keys carry none.
      quotas: caller.quotas ?? null,
      agent_version: body.agent_version,
      draining: false,
      offline_at: null,
      // Registering is the node's first sign of life.
      last_heartbeat_at: now,
      created_at: now,
      updated_at: now,
    };
    await ctx.store.nodes.create(node.node_id, node);
    log.info({ node_id: node.node_id, pool_key: node.pool_key, business_id: node.business_id }, "node registered");
    // A new node holds no allocation yet.
    return {
      node: toNodeSummary(ctx, node, null),
      heartbeat_interval_seconds: ctx.config.CJS_HEARTBEAT_INTERVAL_SECONDS,
    };
  };
}
