import { describeError, errorCode } from "./backoff.js";

/**
 * Why the agent cannot start or must stop. These are the agent's own conditions, not
 * API error codes: each message says what to do.
 */
export const AGENT_ERROR_CODES = [
  /** Neither a state file nor CJS_API_KEY: nothing to act as. */
  "agent.no_credentials",
  /** Another running agent holds the work dir. */
  "agent.work_dir_busy",
  /** The state file exists but cannot be read or parsed. */
  "agent.state_unreadable",
  /** The state file belongs to another application than CJS_APP_ID names. */
  "agent.app_mismatch",
  /** Registration was refused (a bad API key, an operator pool without the admin role, …). */
  "agent.registration_refused",
  /** The service refuses the node key in the state file (revoked, rotated, or another installation). */
  "agent.node_key_refused",
] as const;
export type AgentErrorCode = (typeof AGENT_ERROR_CODES)[number];

export class AgentError extends Error {
  constructor(
    readonly code: AgentErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "AgentError";
  }
}

/** The refusals that no retry can fix: the credential or the app is not (or no longer) accepted. */
const REFUSED_CREDENTIAL = new Set([
  "auth.invalid_credentials",
  "auth.missing_credentials",
  "permission.denied",
  "app.unknown",
]);

/** Whether the service refused the credential (or its app): no retry mends that. */
export function refusesCredential(error: unknown): boolean {
  return REFUSED_CREDENTIAL.has(errorCode(error) ?? "");
}

/** The service refuses the node key of the state file at `statePath`: what to do about it. */
export function nodeKeyRefused(error: unknown, statePath: string): AgentError {
  return new AgentError(
    "agent.node_key_refused",
    `the service refuses this node's key (${describeError(error)}): the node was removed or its key rotated. ` +
      `Move ${statePath} away and set CJS_API_KEY to register a new node.`,
    { cause: error },
  );
}
