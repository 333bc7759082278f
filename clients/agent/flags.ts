import { parseArgs } from "node:util";

/** Each flag and the environment variable it sets; a flag wins over the variable. */
const FLAGS = {
  "gateway-url": "CJS_GATEWAY_URL",
  "nats-url": "CJS_AGENT_NATS_URL",
  "nats-inbox-prefix": "CJS_AGENT_NATS_INBOX_PREFIX",
  "nats-creds-file": "NATS_CREDS_FILE",
  "api-key": "CJS_API_KEY",
  "app-id": "CJS_APP_ID",
  pool: "CJS_POOL",
  labels: "CJS_LABELS",
  slots: "CJS_SLOTS",
  cpu: "CJS_CPU",
  "memory-mb": "CJS_MEMORY_MB",
  "job-types": "CJS_JOB_TYPES",
  "work-dir": "CJS_WORK_DIR",
  "node-name": "CJS_NODE_NAME",
  "kill-grace-ms": "CJS_KILL_GRACE_MS",
  "keep-workspaces": "CJS_KEEP_WORKSPACES",
  "log-level": "LOG_LEVEL",
} as const;

export const USAGE = `Usage: cjs-agent [flags]

Runs jobs of the compute job service on this machine. Every flag can also be given as
the environment variable in brackets; a flag wins over the variable.

  --gateway-url URL     gateway base URL (CJS_GATEWAY_URL, default http://127.0.0.1:8080)
  --nats-url URL        NATS-direct mode: talk to these NATS servers instead of the gateway (CJS_AGENT_NATS_URL)
  --nats-inbox-prefix P where NATS replies come back (CJS_AGENT_NATS_INBOX_PREFIX, default _INBOX)
  --nats-creds-file F   NATS credentials file (NATS_CREDS_FILE; or NATS_TOKEN, NATS_USER/NATS_PASSWORD)
  --api-key KEY         a user API key, for the first registration only (CJS_API_KEY)
  --app-id ID           application id (CJS_APP_ID)
  --pool POOL           pool to register into (CJS_POOL, default "default")
  --labels k=v,k=v      node labels (CJS_LABELS)
  --slots N             jobs run at once (CJS_SLOTS, default 1)
  --cpu N               cores offered (CJS_CPU, default: this machine's)
  --memory-mb N         memory offered (CJS_MEMORY_MB, default: this machine's)
  --job-types a,b       job types taken (CJS_JOB_TYPES, default "shell")
  --work-dir DIR        state file and job workspaces (CJS_WORK_DIR, default .cjs-agent)
  --node-name NAME      the node's name (CJS_NODE_NAME, default: the host name)
  --kill-grace-ms MS    SIGTERM → SIGKILL grace for a job's processes (CJS_KILL_GRACE_MS, default 10000)
  --keep-workspaces B   keep job workspaces after they end (CJS_KEEP_WORKSPACES, default false)
  --log-level LEVEL     fatal … trace, or silent (LOG_LEVEL, default info)
  -h, --help            this text

Prefer CJS_API_KEY over --api-key: flags are visible to other users in the process list.
SIGTERM or SIGINT drains (no new jobs; running ones finish, then exit); a second one stops the jobs.
See docs/agent.md.
`;

export type FlagsResult = { help: true } | { help: false; env: Record<string, string> };

/** Reads the command line into the environment names; throws on an unknown flag or a missing value. */
export function parseFlags(argv: readonly string[]): FlagsResult {
  const options = Object.fromEntries(Object.keys(FLAGS).map((flag) => [flag, { type: "string" as const }]));
  const { values } = parseArgs({
    args: [...argv],
    options: { ...options, help: { type: "boolean", short: "h" } },
    strict: true,
    allowPositionals: false,
  });
  if (values.help === true) return { help: true };
  const given = values as Record<string, string | boolean | undefined>;
  const env: Record<string, string> = {};
  for (const [flag, name] of Object.entries(FLAGS)) {
    const value = given[flag];
    if (typeof value === "string") env[name] = value;
  }
  return { help: false, env };
}
