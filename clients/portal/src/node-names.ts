import { api } from "./session.js";
import { useLoad } from "./use-async.js";

/** The business's nodes by id, to show a node's name where a job names its id (offline ones too). */
export function useNodeNames(): ReadonlyMap<string, string> {
  const nodes = useLoad(() => api().nodes.list({ include_offline: true }), []);
  return new Map(nodes.data?.items.map((node) => [node.node_id, node.name]));
}
