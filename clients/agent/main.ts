#!/usr/bin/env node
import {
  ConfigError,
  createLogger,
  KNOWN_SETTINGS,
  systemClock,
  warnUnknownSettings,
} from "../../shared/runtime/index.js";
import { buildAgent } from "./agent.js";
import { AgentError } from "./agent-error.js";
import { loadConfig } from "./config.js";
import { parseFlags, USAGE } from "./flags.js";

/**
 * `cjs-agent`: reads flags and environment, runs the agent until it is drained or
 * stopped. SIGTERM or SIGINT drains (no new jobs, running ones finish, exit 0); a second
 * one kills the jobs and exits; a third exits at once.
 */
function exitWith(message: string, code: number): never {
  process.stderr.write(`cjs-agent: ${message}\n`);
  process.exit(code);
}

let flagEnv: Record<string, string>;
try {
  const flags = parseFlags(process.argv.slice(2));
  if (flags.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  flagEnv = flags.env;
} catch (error) {
  exitWith(`${(error as Error).message}\n\n${USAGE}`, 2);
}

let config;
try {
  config = loadConfig({ ...process.env, ...flagEnv });
} catch (error) {
  if (error instanceof ConfigError) exitWith(error.message, 2);
  throw error;
}

const logger = createLogger({ service: "agent", level: config.LOG_LEVEL });
warnUnknownSettings(logger, process.env, KNOWN_SETTINGS);
const agent = buildAgent({ config, logger, clock: systemClock, env: process.env });
// However the process ends, no job outlives it unnoticed: the next start reports what was killed.
process.once("exit", () => agent.killNow());

/**
 * Wrappers (`npm run`, `tsx`) pass the terminal's Ctrl-C on while the terminal sends it
 * to the whole process group too, so one keypress can arrive twice in a few milliseconds.
 */
const SAME_SIGNAL_MS = 1_000;
let signals = 0;
let lastSignalMs = 0;
const onSignal = (signal: NodeJS.Signals) => {
  const now = Date.now();
  if (signals > 0 && now - lastSignalMs < SAME_SIGNAL_MS) return;
  lastSignalMs = now;
  signals += 1;
  if (signals === 1) {
    logger.info(
      { signal },
      "draining: running jobs finish, no new ones start (send the signal again to stop them now)",
    );
    void agent.drain();
  } else if (signals === 2) {
    logger.warn({ signal }, "stopping now: killing running jobs");
    void agent.stop();
  } else {
    process.exit(1);
  }
};
process.on("SIGTERM", onSignal);
process.on("SIGINT", onSignal);

agent.done.then(
  () => process.exit(0),
  (error: unknown) => exitWith(error instanceof Error ? error.message : String(error), 1),
);

try {
  await agent.start();
} catch (error) {
  if (signals > 0) process.exit(0);
  exitWith(error instanceof AgentError ? error.message : `cannot start: ${(error as Error).message}`, 1);
}
