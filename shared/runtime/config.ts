import { z } from "zod";
import { formatPath } from "./zod-issues.js";

/** Thrown when the environment does not satisfy a service's config schema; lists every problem. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** Parses an environment map with a schema, once, and freezes the result. */
export function parseConfig<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined>,
): Readonly<z.infer<S>> {
  const result = schema.safeParse(env);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => `${formatPath(issue.path) || "(environment)"}: ${issue.message}`),
    );
  }
  return Object.freeze(result.data);
}

/** An empty variable (`CJS_PORT=`) means "not set", so the default applies. */
const emptyAsUnset = (value: unknown) => (value === "" ? undefined : value);

/** Integer setting read from a string variable, with bounds. */
export function intSetting(defaultValue: number, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}) {
  return z.preprocess(emptyAsUnset, z.coerce.number().int().min(min).max(max).default(defaultValue));
}

/**
 * Where a process serves `/metrics`, `/healthz` and `/readyz`: every interface, on the
 * service's own port by default (each service has its own, so one machine can run them all).
 */
export function opsSettings(defaultPort: number) {
  return {
    CJS_OPS_HOST: z.string().default("0.0.0.0"),
    CJS_OPS_PORT: intSetting(defaultPort, { min: 0, max: 65535 }),
  };
}

/** Boolean setting: `true`/`1`/`yes` or `false`/`0`/`no`. */
export function boolSetting(defaultValue: boolean) {
  return z
    .enum(["true", "false", "1", "0", "yes", "no"])
    .default(defaultValue ? "true" : "false")
    .transform((value) => value === "true" || value === "1" || value === "yes");
}

/**
 * Why a NATS server list (`nats://n1:4222,n2:4222`) cannot be connected to, or undefined
 * when every entry is a `nats://` or `tls://` URL, or a bare `host[:port]`, with a host
 * and a port from 1 to 65535, and no credentials (they would be logged with the URL). The NATS client would otherwise throw a bare `Invalid URL`.
 */
export function natsUrlProblem(list: string): string | undefined {
  const servers = list.split(",").map((server) => server.trim());
  for (const server of servers) {
    if (server === "") return "has an empty entry in its comma-separated list";
    const shown = JSON.stringify(server);
    let url: URL;
    try {
      url = new URL(server.includes("://") ? server : `nats://${server}`);
    } catch {
      return `${shown} is not a NATS server URL (nats://host:port, tls://host:port or host:port)`;
    }
    if (url.protocol !== "nats:" && url.protocol !== "tls:")
      return `${shown} is not a NATS server URL: the scheme must be nats:// or tls://`;
    if (url.hostname === "") return `${shown} is not a NATS server URL: it has no host`;
    if (url.username !== "" || url.password !== "")
      return `${shown.replace(/\/\/[^@]*@/, "//…@")} has a user or password in it: set NATS_USER and NATS_PASSWORD, or NATS_TOKEN, instead`;
    if (url.port === "0") return `${shown} is not a NATS server URL: the port must be 1 to 65535`;
    if ((url.pathname !== "" && url.pathname !== "/") || url.search !== "" || url.hash !== "") {
      return `${shown} is not a NATS server URL: it has a path, query or fragment`;
    }
  }
  return undefined;
}

/** A NATS server list, checked as `natsUrlProblem` does. */
export const NatsUrl = z
  .string()
  .min(1)
  .superRefine((value, context) => {
    const problem = natsUrlProblem(value);
    if (problem !== undefined) context.addIssue({ code: "custom", message: problem });
  });

/** The port of the nats-server `make dev` starts (`CJS_NATS_PORT`), on this machine. */
export const NatsPort = intSetting(4222, { min: 1, max: 65535 });

/** The NATS of this machine on `port`: where `make dev` starts one, and every process looks when NATS_URL is unset. */
export function localNatsUrl(port: number): string {
  return `nats://127.0.0.1:${port}`;
}

/** An http(s) URL setting; empty means not set. */
const optionalUrl = z.preprocess(
  emptyAsUnset,
  z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }).optional(),
);

/** Settings every service shares. */
export const BaseConfig = z.object({
  /** One server or a comma-separated list. */
  NATS_URL: NatsUrl.default(localNatsUrl(NatsPort.parse(undefined))),
  /** Credentials for a NATS server that requires them: a creds file (JWT + NKey), a token, or a user and password. */
  NATS_CREDS_FILE: z.string().min(1).optional(),
  NATS_TOKEN: z.string().min(1).optional(),
  NATS_USER: z.string().min(1).optional(),
  NATS_PASSWORD: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Replicas of the streams and buckets a service creates (3 in a production cluster). */
  CJS_NATS_REPLICAS: intSetting(1, { min: 1, max: 5 }),
  /** Pause between the JetStream checks behind `/readyz` (each asks every stream the service uses for its leader). */
  CJS_JETSTREAM_PROBE_INTERVAL_MS: intSetting(5_000, { min: 100, max: 300_000 }),
  /**
   * The JetStream store's size (the servers' `max_file_store`), which the account info does
   * not tell: past 98 % of it `/readyz` answers 503. Unset: the account's own limit, if any.
   */
  CJS_JETSTREAM_MAX_STORE_BYTES: z.preprocess(
    (value) => (value === "" ? undefined : value),
    z.coerce.number().int().min(1).optional(),
  ),
  /**
   * OpenTelemetry's own names (docs/operations.md, "Tracing"): either endpoint turns
   * tracing on. The OTLP exporter reads its other `OTEL_EXPORTER_OTLP_*` variables itself.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalUrl,
  OTEL_SERVICE_NAME: z.preprocess(emptyAsUnset, z.string().optional()),
  OTEL_SDK_DISABLED: boolSetting(false),
  /** How long finished spans wait to be sent in one batch. */
  OTEL_BSP_SCHEDULE_DELAY: intSetting(5_000, { min: 1, max: 300_000 }),
});
export type BaseConfig = z.infer<typeof BaseConfig>;
