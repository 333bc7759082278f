import { z } from "zod";
import { QuotaLimits, type NodeStatus } from "../contract/index.js";

/** A node as stored in the `cjs_nodes` bucket under its id. Only the node-registry writes it. Loose: see docs/architecture.md, "Rolling upgrades". */
export const NodeRecord = z.looseObject({
  node_id: z.string(),
  app_id: z.string(),
  business_id: z.string(),
  /** The user who registered it. */
  user_id: z.string(),
  name: z.string(),
  hostname: z.string(),
  pool_id: z.string(),
  /** Same form as a job's `pool_key`. */
  pool_key: z.string(),
  labels: z.record(z.string(), z.string()),
  capacity: z.looseObject({ cpu: z.number(), memory_mb: z.number(), gpu: z.number(), slots: z.number().int() }),
  job_types: z.array(z.string()),
  /** Caps inherited from the API key that registered the node (null or absent: a JWT did, no caps). Kept across key rotations. */
  quotas: QuotaLimits.loose().nullable().optional(),
  agent_version: z.string(),
  draining: z.boolean(),
  /** Set when the node missed its heartbeats; cleared when it heartbeats again. */
  offline_at: z.string().nullable(),
  last_heartbeat_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type NodeRecord = z.infer<typeof NodeRecord>;

export function nodeStatus(node: NodeRecord): NodeStatus {
  if (node.offline_at !== null) return "offline";
  return node.draining ? "draining" : "online";
}
