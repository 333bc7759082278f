import { z } from "zod";
import { AppId, Email } from "../../shared/contract/index.js";
import { intSetting, NatsPort, NatsUrl, parseConfig } from "../../shared/runtime/index.js";

/**
 * The log stream's and the artifact store's size on one machine (`make dev`, the local
 * cluster), unless set: JetStream reserves each bounded stream's size in its store at once,
 * and the production defaults (10 GiB each) would not fit beside each other on a laptop
 * with under about 30 GB of disk free.
 */
export const LOCAL_STREAM_SIZES = {
  CJS_LOGS_MAX_BYTES: String(1024 ** 3),
  CJS_ARTIFACT_STORE_MAX_BYTES: String(1024 ** 3),
} as const;

/**
 * Settings of the embedded development system (`make dev`). Every other variable
 * (the services' own settings) passes through to the services unchanged.
 */
export const DevConfig = z.object({
  /** Where the embedded nats-server keeps its store and where the admin login is kept. */
  CJS_DATA_DIR: z.string().min(1).default(".data"),
  /** A running NATS to use instead of starting one. */
  NATS_URL: NatsUrl.optional(),
  /** Port of the embedded nats-server (ignored with NATS_URL). */
  CJS_NATS_PORT: NatsPort,
  CJS_HOST: z.string().default("127.0.0.1"),
  CJS_PORT: intSetting(8080, { min: 0, max: 65535 }),
  /** Where the process serves /metrics, /healthz and /readyz for all six services. */
  CJS_OPS_HOST: z.string().default("127.0.0.1"),
  CJS_OPS_PORT: intSetting(9100, { min: 0, max: 65535 }),
  CJS_APP_ID: AppId.default("local"),
  CJS_ADMIN_EMAIL: Email.default("admin@localhost"),
  /** When unset, a password is generated on first start and kept in the data dir. */
  CJS_ADMIN_PASSWORD: z.string().min(12, "at least 12 characters").optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});
export type DevConfig = z.infer<typeof DevConfig>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<DevConfig> {
  return parseConfig(DevConfig, env);
}
