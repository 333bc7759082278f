import type { Logger } from "../../shared/runtime/index.js";
import { describeError, retrying } from "./backoff.js";
import type { Heartbeats } from "./heartbeat-loop.js";
import type { NodePlane } from "./node-plane.js";
import type { StateFile } from "./state-file.js";

/** How long a drain (or its lifting) is asked for before the agent gives up on it. */
const DRAIN_GIVE_UP_MS = 30_000;

/** The node the agent acts as, once started: its state file, its plane and its heartbeats. */
export interface StartedNode {
  state: StateFile;
  plane: NodePlane;
  heartbeats: Heartbeats;
}

export interface DrainDeps {
  logger: Logger;
  /** Aborted when the agent stops: the request's retries end. */
  halt: AbortSignal;
}

/**
 * Sets (or lifts) this node's drain, as its own request; gives up when the service stays
 * away. The state file says "drained by the agent" from before the request until the
 * drain is lifted, so a drain this agent may have set is always lifted at its next start.
 */
export async function setNodeDrain(
  { state, plane }: Pick<StartedNode, "state" | "plane">,
  draining: boolean,
  { logger, halt }: DrainDeps,
): Promise<void> {
  if (draining) await state.update((saved) => void (saved.drained_by_agent = true));
  await retrying(() => plane.drain({ draining }, halt), {
    what: draining ? "drain" : "lifting the drain",
    logger,
    signal: halt,
    giveUpAfterMs: DRAIN_GIVE_UP_MS,
  });
  if (!draining) await state.update((saved) => void (saved.drained_by_agent = false));
}

/**
 * Marks the node draining by its own request, unless the service holds it draining already.
 * True once this request recorded the drain; false when it was recorded before, or could not be.
 */
export async function markDraining(node: StartedNode, deps: DrainDeps): Promise<boolean> {
  if (node.heartbeats.draining) return false;
  return setNodeDrain(node, true, deps).then(
    () => true,
    (error: unknown) => {
      deps.logger.warn({ error: describeError(error) }, "could not mark the node draining");
      return false;
    },
  );
}
