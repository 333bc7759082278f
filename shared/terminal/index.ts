export { PromptCancelled, TerminalPrompt } from "./prompt.js";
export { UsageError } from "./usage-error.js";
