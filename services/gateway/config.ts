import { z } from "zod";
import { BaseConfig, boolSetting, intSetting, parseConfig, opsSettings } from "../../shared/runtime/index.js";
import { corsOriginProblem } from "./http/cors.js";

/** A comma-separated list of browser origins; empty or unset, none. Every bad entry is named. */
const corsOrigins = z
  .string()
  .default("")
  .transform((list, context) => {
    const origins = list
      .split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry !== "");
    for (const origin of origins) {
      const problem = corsOriginProblem(origin);
      if (problem !== undefined) context.addIssue({ code: "custom", message: problem });
    }
    return origins;
  });

export const GatewayConfig = BaseConfig.extend({
  CJS_HOST: z.string().default("0.0.0.0"),
  CJS_PORT: intSetting(8080, { min: 0, max: 65535 }),
  ...opsSettings(9100),
  /** Largest JSON body accepted, in bytes. */
  CJS_MAX_BODY_BYTES: intSetting(1_048_576, { min: 1024 }),
  /** The request line and headers must arrive within this (408 `request.timeout`). */
  CJS_HTTP_HEADERS_TIMEOUT_MS: intSetting(10_000, { min: 100, max: 300_000 }),
  /** A body must arrive in full within this, plus a second per CJS_HTTP_BODY_MIN_BYTES_PER_SECOND bytes received (408). */
  CJS_HTTP_BODY_TIMEOUT_MS: intSetting(10_000, { min: 100, max: 300_000 }),
  CJS_HTTP_BODY_MIN_BYTES_PER_SECOND: intSetting(16_384, { min: 1, max: 1_073_741_824 }),
  /** A connection with no byte either way for this long is closed; above the longest long poll (30 s). */
  CJS_HTTP_IDLE_TIMEOUT_MS: intSetting(120_000, { min: 31_000, max: 3_600_000 }),
  /** A kept-alive connection idle between requests is closed after this; above a load balancer's own idle timeout. */
  CJS_HTTP_KEEP_ALIVE_TIMEOUT_MS: intSetting(72_000, { min: 1_000, max: 600_000 }),
  /** Open connections one client address may hold, before any credential is read; 0: no limit (behind a proxy that keeps it). */
  CJS_HTTP_MAX_CONNECTIONS_PER_IP: intSetting(256, { min: 0, max: 1_000_000 }),
  /** `iss` and `aud` of the access tokens this service issues and accepts. */
  CJS_JWT_ISSUER: z.string().min(1).default("compute-job-service"),
  CJS_JWT_AUDIENCE: z.string().min(1).default("compute-job-service-api"),
  CJS_ACCESS_TOKEN_TTL_SECONDS: intSetting(900, { min: 60, max: 86_400 }),
  /**
   * The access-token signing keys, as a JWK Set (docs/operations.md, "Secrets and their
   * rotation"), given inline or as a file re-read while running. Neither: kept in NATS KV.
   */
  CJS_JWT_SIGNING_KEYS: z.string().min(1).optional(),
  CJS_JWT_SIGNING_KEYS_FILE: z.string().min(1).optional(),
  /** The URL-signing secrets, inline or as a file, the same way. Neither: kept in NATS KV. */
  CJS_URL_SIGNING_KEYS: z.string().min(1).optional(),
  CJS_URL_SIGNING_KEYS_FILE: z.string().min(1).optional(),
  /** Pause between re-reads of a signing-key file. */
  CJS_SIGNING_KEYS_RELOAD_MS: intSetting(5_000, { min: 100, max: 300_000 }),
  CJS_REFRESH_TOKEN_TTL_SECONDS: intSetting(30 * 86_400, { min: 3600, max: 90 * 86_400 }),
  /** How long the refresh token spent by a refresh still answers with the same new pair (0: never; reuse ends the session at once). */
  CJS_REFRESH_REUSE_GRACE_SECONDS: intSetting(30, { min: 0, max: 300 }),
  /** Failed sign-ins of one account after which each try must wait, from 1 s doubling per failure. */
  CJS_LOGIN_SLOW_AFTER_FAILURES: intSetting(3, { min: 1, max: 10_000 }),
  /** Failed sign-ins of one account after which it is locked for CJS_LOGIN_LOCK_SECONDS. */
  CJS_LOGIN_LOCK_AFTER_FAILURES: intSetting(10, { min: 2, max: 10_000 }),
  /** The same two thresholds per client address: higher, since one address may be a whole office. */
  CJS_LOGIN_ADDRESS_SLOW_AFTER_FAILURES: intSetting(20, { min: 1, max: 100_000 }),
  CJS_LOGIN_ADDRESS_LOCK_AFTER_FAILURES: intSetting(100, { min: 2, max: 100_000 }),
  CJS_LOGIN_LOCK_SECONDS: intSetting(900, { min: 1, max: 86_400 }),
  /** SMTP server for one-time codes, e.g. `smtps://user:pass@mail.example.com`. Unset: codes go to the log (dev outbox). */
  CJS_SMTP_URL: z.url().optional(),
  CJS_SMTP_FROM: z.string().default("Compute Job Service <no-reply@localhost>"),
  /** Without SMTP: print one-time codes on standard output (for local development only). */
  CJS_DEV_OUTBOX: boolSetting(false),
  /** Browser origins allowed to call the API cross-origin (CORS), exactly as sent in `Origin`. */
  CJS_CORS_ORIGINS: corsOrigins,
  /** Seconds a cached app, key, session or user is trusted without its watch saying it changed: the bound on a missed change. */
  CJS_IDENTITY_CACHE_MAX_AGE_SECONDS: intSetting(15, { min: 1, max: 3_600 }),
  /** Mean event-loop delay (ms, over the last second) above which new requests are refused with 503; 0: never. */
  CJS_SHED_EVENT_LOOP_DELAY_MS: intSetting(1000, { min: 0, max: 60_000 }),
  /** The `Retry-After` of those refusals. */
  CJS_SHED_RETRY_AFTER_SECONDS: intSetting(2, { min: 1, max: 300 }),
  /** Trust `X-Forwarded-For` from a reverse proxy for the client address (sign-in throttling, logs). */
  CJS_TRUST_PROXY: boolSetting(false),
  /** The built web portal (`make build` writes it); relative paths are from the working directory. */
  CJS_PORTAL_DIR: z.string().min(1).default("clients/portal/dist"),
  /** Lifetime of a signed log stream URL (`jobs/logs/stream-url`); a stream opened with it goes on past it. */
  CJS_LOG_STREAM_URL_TTL_SECONDS: intSetting(300, { min: 10, max: 86_400 }),
  /** Job log streams open at once on one gateway replica: per user, per signed URL and per business (429 past each). */
  CJS_LOG_STREAMS_PER_USER: intSetting(20, { min: 1, max: 100_000 }),
  CJS_LOG_STREAMS_PER_URL: intSetting(4, { min: 1, max: 100_000 }),
  CJS_LOG_STREAMS_PER_BUSINESS: intSetting(100, { min: 1, max: 1_000_000 }),
  /**
   * Stored log bytes one business's streams may read back (replays) a second on one
   * replica, all together (a fifth of it at once after a quiet spell); a stream past it
   * waits its turn. The live tail is not paced.
   */
  CJS_LOG_STREAM_BYTES_PER_SECOND: intSetting(2 * 1024 * 1024, { min: 65_536, max: 10 * 1024 ** 3 }),
  /** Jobs whose logs one gateway replica streams at once: one consumer of CJS_LOGS each (503 past it). */
  CJS_LOG_STREAM_JOBS_MAX: intSetting(1_000, { min: 1, max: 1_000_000 }),
  /** Seconds between keep-alive comments on an idle log stream; at most 15, as the API promises. */
  CJS_SSE_KEEPALIVE_SECONDS: intSetting(15, { min: 1, max: 15 }),
  /** Lifetime of a presigned artifact URL; an agent's upload URL lives the job's timeout plus this. */
  CJS_ARTIFACT_URL_TTL_SECONDS: intSetting(900, { min: 1, max: 7 * 86_400 }),
  /**
   * Requests one user (bearer JWT or user API key) may make in a second, counted over every
   * gateway replica: the burst, so a user's minute cannot land on the service all at once.
   */
  CJS_RATE_LIMIT_PER_SECOND: intSetting(50, { min: 1, max: 1_000_000 }),
  /** Requests one user may make per minute, counted over every gateway replica. */
  CJS_RATE_LIMIT_PER_MINUTE: intSetting(1000, { min: 1, max: 10_000_000 }),
  /** Requests one user may make per hour, counted over every gateway replica. */
  CJS_RATE_LIMIT_PER_HOUR: intSetting(30_000, { min: 1, max: 600_000_000 }),
  /** Calls one node may make with its key in a second, on each gateway replica (its polls, results and log pushes follow its jobs). */
  CJS_NODE_RATE_LIMIT_PER_SECOND: intSetting(1000, { min: 1, max: 1_000_000 }),
  /** Of those, its heartbeats, drains and key rotations, whose need does not grow with its jobs. */
  CJS_NODE_CONTROL_RATE_LIMIT_PER_SECOND: intSetting(5, { min: 1, max: 1_000_000 }),
  /** An artifact upload over NATS (NATS-direct agents) with no message for this long is aborted and leaves nothing behind. */
  CJS_NATS_UPLOAD_IDLE_SECONDS: intSetting(30, { min: 1, max: 3_600 }),
  /** Largest artifact accepted, in bytes (5 GiB). */
  CJS_MAX_ARTIFACT_BYTES: intSetting(5 * 1024 ** 3, { min: 1 }),
  /**
   * The artifact store's size (`max_bytes` of `OBJ_cjs_artifacts`), every tenant's artifacts
   * together (10 GiB): full, it refuses uploads and nothing else. JetStream reserves it in its
   * store when the stream is made, so it must fit there beside the other streams.
   */
  CJS_ARTIFACT_STORE_MAX_BYTES: intSetting(10 * 1024 ** 3, { min: 1_048_576, max: 1_125_899_906_842_624 }),
  /** The longest life of a user's API key, in days; unset: keys may live for ever. */
  CJS_API_KEY_MAX_TTL_DAYS: z.preprocess(
    (value) => (value === "" ? undefined : value),
    z.coerce.number().int().min(1).max(36_500).optional(),
  ),
});
export type GatewayConfig = z.infer<typeof GatewayConfig>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<GatewayConfig> {
  return parseConfig(GatewayConfig, env);
}
