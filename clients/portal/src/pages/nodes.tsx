import { CardTable } from "../components/card-table.js";
import { useState } from "preact/hooks";
import type { RotateNodeKeyResponse } from "../../../../shared/contract/index.js";
import { ConfirmButton } from "../components/confirm-button.js";
import { ErrorNote } from "../components/error-note.js";
import { SecretOnce } from "../components/secret-once.js";
import { StateBadge } from "../components/state-badge.js";
import { when } from "../format.js";
import { api } from "../session.js";
import { useAction, useLoad } from "../use-async.js";

const POLL_MS = 5000;

/** The business's nodes: state, capacity and use; drain, undrain, rotate a node's key, delete an offline one. */
export function NodesPage() {
  const nodes = useLoad(() => api().nodes.list({ include_offline: true }), [], { pollMs: POLL_MS });
  const [rotated, setRotated] = useState<RotateNodeKeyResponse>();
  const action = useAction(() => nodes.reload());

  return (
    <main>
      <h1>Nodes</h1>
      {rotated ? (
        <SecretOnce
          label={`New key of ${rotated.node_id} (the old one works until ${when(rotated.previous_key_expires_at)})`}
          secret={rotated.api_key}
          onDone={() => setRotated(undefined)}
        />
      ) : null}
      <ErrorNote error={nodes.error ?? action.error} />
      <CardTable
        columns={["Node", "State", "Pool", "Slots used", "CPU used", "Memory used (MB)", "Last heartbeat"]}
        actions
        empty={nodes.data?.items.length === 0 && "No nodes yet: run an agent (docs/agent.md)."}
      >
        {nodes.data?.items.map((node) => (
          <tr data-node-id={node.node_id}>
            <td data-label="Node">
              {node.name} <span class="hint">{node.node_id}</span>
            </td>
            <td data-label="State">
              <StateBadge state={node.state} />
            </td>
            <td data-label="Pool">{node.pool_id}</td>
            <td data-label="Slots used">
              <meter min={0} max={node.capacity.slots} value={node.used.slots} aria-hidden="true" /> {node.used.slots} /{" "}
              {node.capacity.slots}
            </td>
            <td data-label="CPU used">
              {node.used.cpu} / {node.capacity.cpu}
            </td>
            <td data-label="Memory (MB)">
              {node.used.memory_mb} / {node.capacity.memory_mb}
            </td>
            <td data-label="Last heartbeat">{when(node.last_heartbeat_at)}</td>
            <td class="row-actions">
              {node.state === "draining" ? (
                <button
                  type="button"
                  disabled={action.busy}
                  onClick={() => action.act(() => api().nodes.drain({ node_id: node.node_id, draining: false }))}
                >
                  Undrain
                </button>
              ) : (
                <button
                  type="button"
                  disabled={action.busy || node.state === "offline"}
                  onClick={() => action.act(() => api().nodes.drain({ node_id: node.node_id, draining: true }))}
                >
                  Drain
                </button>
              )}
              <button
                type="button"
                class="secondary"
                disabled={action.busy}
                onClick={() =>
                  action.act(async () =>
                    setRotated(await api().nodes.rotateKey({ node_id: node.node_id, grace_seconds: 300 })),
                  )
                }
              >
                Rotate key
              </button>
              <ConfirmButton
                label="Delete…"
                name={`Delete ${node.name}`}
                title={`Delete the node ${node.name}?`}
                confirm="Delete the node"
                disabled={action.busy || node.state !== "offline"}
                onConfirm={() => action.act(() => api().nodes.delete(node.node_id))}
              >
                <p>Its keys stop working at once; an agent that comes back must register again.</p>
              </ConfirmButton>
            </td>
          </tr>
        ))}
      </CardTable>
    </main>
  );
}
