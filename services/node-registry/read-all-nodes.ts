import type { Versioned } from "../../shared/nats/index.js";
import type { NodeRecord } from "../../shared/records/index.js";
import type { RegistryContext } from "./registry-context.js";

/**
 * Every node record, whatever its tenant. Nodes are few (one per machine), so reading them
 * all is cheap. A deleted key is skipped, and so is a record that fails its schema (logged),
 * so one bad record cannot stop the sweep.
 */
export async function readAllNodes(ctx: RegistryContext): Promise<Versioned<NodeRecord>[]> {
  const ids = await ctx.store.nodeIds();
  const nodes = await Promise.all(
    ids.map((id) =>
      ctx.store.nodes.get(id).catch((error: unknown) => {
        ctx.logger.error({ err: error, node_id: id }, "unreadable node record skipped");
        return null;
      }),
    ),
  );
  return nodes.filter((node): node is Versioned<NodeRecord> => node !== null);
}
