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
