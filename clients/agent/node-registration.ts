import { hostname } from "node:os";
import type { Logger } from "../../shared/runtime/index.js";
import { AgentError } from "./agent-error.js";
import { describeError, retrying } from "./backoff.js";
import type { AgentConfig } from "./config.js";
import type { NodePlane } from "./node-plane.js";
import { type AgentState, StateFile } from "./state-file.js";

export const AGENT_VERSION = "0.1.0";

export interface NodeRegistrationDeps {
  config: Readonly<AgentConfig>;
  logger: Logger;
  statePath: string;
  /** The node plane of an application, not yet acting as a node. */
  planeOf: (appId: string) => NodePlane;
  /** Aborted when the agent stops: the registration's retries end. */
  halt: AbortSignal;
}

/** The node the agent acts as: its state file, the plane acting as it, and whether this start registered it. */
export interface OpenedNode {
  file: StateFile;
  plane: NodePlane;
  registered: boolean;
  /** The heartbeat interval the registration answered; unknown when the node resumed. */
  heartbeatIntervalMs: number | undefined;
}

/** Reads the state file, or registers the node and writes it. */
export async function openNode(deps: NodeRegistrationDeps): Promise<OpenedNode> {
  const saved = await StateFile.read(deps.statePath);
  return saved ? resumeNode(deps, saved) : registerNode(deps);
}

/** The node of the state file, with what changed in the settings since it was written said in the log. */
async function resumeNode(
  { config, logger, statePath, planeOf }: NodeRegistrationDeps,
  saved: AgentState,
): Promise<OpenedNode> {
  if (config.CJS_APP_ID !== undefined && config.CJS_APP_ID !== saved.app_id) {
    throw new AgentError(
      "agent.app_mismatch",
      `the state file ${statePath} is for app "${saved.app_id}", not "${config.CJS_APP_ID}": use another work dir for another app`,
    );
  }
  if (saved.gateway_url !== config.CJS_GATEWAY_URL) {
    logger.info(
      { was: saved.gateway_url, now: config.CJS_GATEWAY_URL },
      "the gateway URL changed since the last run; using the new one",
    );
    saved.gateway_url = config.CJS_GATEWAY_URL;
  }
  if (saved.pool_id !== config.CJS_POOL || saved.slots !== config.CJS_SLOTS) {
    logger.warn(
      {
        registered: { pool: saved.pool_id, slots: saved.slots },
        configured: { pool: config.CJS_POOL, slots: config.CJS_SLOTS },
      },
      "the node was registered with other settings, which still apply; move the state file away to register a new node",
    );
  }
  return {
    file: await StateFile.create(statePath, saved, logger),
    plane: planeOf(saved.app_id).withNodeKey(saved.node_key),
    registered: false,
    heartbeatIntervalMs: undefined,
  };
}

/** Registers a new node with the user API key of the settings, and writes its state file. */
async function registerNode({ config, logger, statePath, planeOf, halt }: NodeRegistrationDeps): Promise<OpenedNode> {
  const apiKey = config.CJS_API_KEY;
  const appId = config.CJS_APP_ID;
  if (apiKey === undefined || appId === undefined) {
    throw new AgentError(
      "agent.no_credentials",
      `no state file at ${statePath}, so this node must register first: set CJS_API_KEY (a user API key) and CJS_APP_ID`,
    );
  }
  const userPlane = planeOf(appId);
  const request = {
    name: config.CJS_NODE_NAME,
    hostname: hostname(),
    pool_id: config.CJS_POOL,
    labels: config.CJS_LABELS,
    capacity: { cpu: config.CJS_CPU, memory_mb: config.CJS_MEMORY_MB, gpu: 0, slots: config.CJS_SLOTS },
    job_types: config.CJS_JOB_TYPES,
    agent_version: AGENT_VERSION,
  };
  let registered;
  try {
    registered = await retrying(() => userPlane.register(request, apiKey, halt), {
      what: "registration",
      logger,
      signal: halt,
    });
  } catch (error) {
    if (halt.aborted) throw error;
    throw new AgentError("agent.registration_refused", `registration refused: ${describeError(error)}`, {
      cause: error,
    });
  }
  const file = await StateFile.create(
    statePath,
    {
      node_id: registered.node_id,
      node_key: registered.api_key,
      gateway_url: config.CJS_GATEWAY_URL,
      app_id: appId,
      pool_id: config.CJS_POOL,
      slots: config.CJS_SLOTS,
      drained_by_agent: false,
      attempts: [],
    },
    logger,
  );
  logger.info({ node_id: registered.node_id, pool: config.CJS_POOL, state_file: statePath }, "node registered");
  return {
    file,
    plane: userPlane.withNodeKey(registered.api_key),
    registered: true,
    heartbeatIntervalMs: registered.heartbeat_interval_seconds * 1000,
  };
}
