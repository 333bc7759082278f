import { availableParallelism, hostname, totalmem } from "node:os";
import { resolve } from "node:path";
import { z } from "zod";
import { AppId, JobTypeName, Labels, PoolId } from "../../shared/contract/index.js";
import { boolSetting, intSetting, NatsUrl, parseConfig } from "../../shared/runtime/index.js";

/** An empty variable (`CJS_CPU=`) means "not set", so the default applies. */
const unsetIfEmpty = (value: unknown) => (value === "" ? undefined : value);

/** `k=v,k=v` → `{ k: v }`, checked with the same rules as a node's labels. */
const LabelsSetting = z
  .preprocess(unsetIfEmpty, z.string().default(""))
  .transform((text, ctx) => {
    const labels: Record<string, string> = {};
    for (const pair of text
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean)) {
      const equals = pair.indexOf("=");
      if (equals <= 0) {
        ctx.addIssue({ code: "custom", message: `"${pair}" is not key=value` });
        return z.NEVER;
      }
      labels[pair.slice(0, equals).trim()] = pair.slice(equals + 1).trim();
    }
    return labels;
  })
  .pipe(Labels);

/** `shell,python` → `["shell", "python"]`. */
const JobTypesSetting = z
  .preprocess(unsetIfEmpty, z.string().default("shell"))
  .transform((text) =>
    text
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean),
  )
  .pipe(z.array(JobTypeName).min(1).max(64));

/**
 * Settings of `cjs-agent`, from the environment or the same names given as flags
 * (`--gateway-url` is `CJS_GATEWAY_URL`; see flags.ts). `docs/agent.md` lists each one.
 */
export const AgentConfig = z.object({
  /** The gateway's base URL. */
  CJS_GATEWAY_URL: z.preprocess(unsetIfEmpty, z.url({ protocol: /^https?$/ }).default("http://127.0.0.1:8080")),
  /**
   * NATS-direct mode: the NATS server(s) to talk to instead of the gateway's HTTP API
   * (one URL or a comma-separated list). Unset: HTTP.
   */
  CJS_AGENT_NATS_URL: z.preprocess(unsetIfEmpty, NatsUrl.optional()),
  /** Where NATS replies come back; the agent's NATS user may subscribe to `<prefix>.>` and nothing else. */
  CJS_AGENT_NATS_INBOX_PREFIX: z.preprocess(
    unsetIfEmpty,
    z
      .string()
      .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, "NATS subject tokens without wildcards")
      .default("_INBOX"),
  ),
  /** The NATS credential of NATS-direct mode, with the names the services use: a creds file wins over a token over a user. */
  NATS_CREDS_FILE: z.preprocess(unsetIfEmpty, z.string().optional()),
  NATS_TOKEN: z.preprocess(unsetIfEmpty, z.string().optional()),
  NATS_USER: z.preprocess(unsetIfEmpty, z.string().optional()),
  NATS_PASSWORD: z.preprocess(unsetIfEmpty, z.string().optional()),
  /** A user's API key: needed only to register the node the first time. */
  CJS_API_KEY: z.preprocess(unsetIfEmpty, z.string().min(1).optional()),
  /** The application (`X-App-ID`); optional once a state file names it. */
  CJS_APP_ID: z.preprocess(unsetIfEmpty, AppId.optional()),
  CJS_POOL: z.preprocess(unsetIfEmpty, PoolId.default("default")),
  CJS_LABELS: LabelsSetting,
  /** How many jobs run at once. */
  CJS_SLOTS: intSetting(1, { min: 1, max: 1024 }),
  /** Cores offered; the machine's by default. */
  CJS_CPU: z.preprocess(
    unsetIfEmpty,
    z.coerce
      .number()
      .positive()
      .max(4096)
      .default(() => availableParallelism()),
  ),
  /** Memory offered; the machine's by default. */
  CJS_MEMORY_MB: z.preprocess(
    unsetIfEmpty,
    z.coerce
      .number()
      .int()
      .min(1)
      .max(16_777_216)
      .default(() => Math.max(1, Math.floor(totalmem() / 1_048_576))),
  ),
  CJS_JOB_TYPES: JobTypesSetting,
  /** The state file, job workspaces and log spools live here (made absolute). */
  CJS_WORK_DIR: z.preprocess(
    unsetIfEmpty,
    z
      .string()
      .default(".cjs-agent")
      .transform((path) => resolve(path)),
  ),
  CJS_NODE_NAME: z.preprocess(
    unsetIfEmpty,
    z
      .string()
      .trim()
      .min(1)
      .max(200)
      .default(() => hostname()),
  ),
  /** Between SIGTERM and SIGKILL when a job's process tree is stopped. */
  CJS_KILL_GRACE_MS: intSetting(10_000, { min: 0, max: 600_000 }),
  /** Keep each job's workspace after its result is reported (for debugging). */
  CJS_KEEP_WORKSPACES: boolSetting(false),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});
export type AgentConfig = z.infer<typeof AgentConfig>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<AgentConfig> {
  return parseConfig(AgentConfig, env);
}
