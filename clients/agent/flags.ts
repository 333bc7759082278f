import { Command, CommanderError, Option } from "commander";

/** Each flag, the environment variable it sets (a flag wins over the variable), and its help. */
const FLAGS = [
  ["gateway-url", "URL", "CJS_GATEWAY_URL", "gateway base URL (default http://127.0.0.1:8080)"],
  ["nats-url", "URL", "CJS_AGENT_NATS_URL", "NATS-direct mode: talk to these NATS servers instead of the gateway"],
  ["nats-inbox-prefix", "P", "CJS_AGENT_NATS_INBOX_PREFIX", "where NATS replies come back (default _INBOX)"],
  ["nats-creds-file", "F", "NATS_CREDS_FILE", "NATS credentials file (or NATS_TOKEN, NATS_USER/NATS_PASSWORD)"],
  ["api-key", "KEY", "CJS_API_KEY", "a user API key, for the first registration only"],
  ["app-id", "ID", "CJS_APP_ID", "application id"],
  ["pool", "POOL", "CJS_POOL", 'pool to register into (default "default")'],
  ["labels", "k=v,k=v", "CJS_LABELS", "node labels"],
  ["slots", "N", "CJS_SLOTS", "jobs run at once (default 1)"],
  ["cpu", "N", "CJS_CPU", "cores offered (default: this machine's)"],
  ["memory-mb", "N", "CJS_MEMORY_MB", "memory offered (default: this machine's)"],
  ["job-types", "a,b", "CJS_JOB_TYPES", 'job types taken (default "shell")'],
  ["work-dir", "DIR", "CJS_WORK_DIR", "state file and job workspaces (default .cjs-agent)"],
  ["node-name", "NAME", "CJS_NODE_NAME", "the node's name (default: the host name)"],
  ["kill-grace-ms", "MS", "CJS_KILL_GRACE_MS", "SIGTERM → SIGKILL grace for a job's processes (default 10000)"],
  ["keep-workspaces", "B", "CJS_KEEP_WORKSPACES", "keep job workspaces after they end (default false)"],
  ["log-level", "LEVEL", "LOG_LEVEL", "fatal … trace, or silent (default info)"],
] as const;

/** The command line of `cjs-agent` (commander, as `cjs` uses): every flag takes a value; no arguments. */
function agentCommand(): Command {
  const command = new Command("cjs-agent")
    .description(
      "Runs jobs of the compute job service on this machine. Every flag can also be given as the environment variable in brackets; a flag wins over the variable.",
    )
    .helpOption("-h, --help", "this text")
    .allowExcessArguments(false)
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined })
    .addHelpText(
      "after",
      [
        "",
        "Prefer CJS_API_KEY over --api-key: flags are visible to other users in the process list.",
        "SIGTERM or SIGINT drains (no new jobs; running ones finish, then exit); a second one stops the jobs.",
        "See docs/agent.md.",
      ].join("\n"),
    );
  for (const [flag, value, env, help] of FLAGS)
    command.addOption(new Option(`--${flag} <${value}>`, `${help} (${env})`));
  return command;
}

/** The help text `--help` prints. */
export const USAGE = (() => {
  const command = agentCommand();
  let text = "";
  command.configureOutput({ writeOut: (chunk) => void (text += chunk) });
  command.outputHelp();
  return text;
})();

export type FlagsResult = { help: true } | { help: false; env: Record<string, string> };

/** Reads the command line into the environment names; throws on an unknown flag, a missing value or an argument. */
export function parseFlags(argv: readonly string[]): FlagsResult {
  const command = agentCommand();
  try {
    command.parse([...argv], { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError && error.code === "commander.helpDisplayed") return { help: true };
    throw error;
  }
  const given = command.opts<Record<string, string | undefined>>();
  const env: Record<string, string> = {};
  for (const [flag, , name] of FLAGS) {
    const value = given[new Option(`--${flag}`).attributeName()];
    if (value !== undefined) env[name] = value;
  }
  return { help: false, env };
}
