export { PromptCancelled, TerminalPrompt } from "./prompt.js";
