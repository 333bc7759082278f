export { AGENT_VERSION, buildAgent } from "./agent.js";
export type { Agent, AgentDeps, AgentIdentity } from "./agent.js";
export { AgentError } from "./agent-error.js";
export type { AgentErrorCode } from "./agent-error.js";
export { AgentConfig, loadConfig } from "./config.js";
export { httpNodePlane } from "./node-plane.js";
export type { AgentAssignment, ArtifactFile, NodePlane } from "./node-plane.js";
export { processGroupMembers } from "./proc.js";
export { STATE_FILE_NAME, stateFilePath } from "./state-file.js";
