import { pino, type DestinationStream, type Logger } from "pino";

/** Fields that may carry a secret; pino replaces them wherever they appear in a log object. */
const REDACTED_PATHS = [
  "password",
  "*.password",
  "key",
  "*.key",
  "*.code_hash",
  "access_token",
  "refresh_token",
  "*.access_token",
  "*.refresh_token",
  "req.headers.authorization",
  "req.headers[\"x-api-key\"]",
  "req.headers.cookie",
  "headers.authorization",
  "headers[\"x-api-key\"]",
  "secret",
  "*.secret",
  "CJS_STRIPE_SECRET_KEY",
  "*.CJS_STRIPE_SECRET_KEY",
  "CJS_STRIPE_WEBHOOK_SECRET",
  "*.CJS_STRIPE_WEBHOOK_SECRET",
  "req.headers[\"stripe-signature\"]",
  "req.headers[\"cjs-sandbox-signature\"]",
];

/**
 * JSON lines for machines; `pretty` (local development only) renders them for people via
 * pino-pretty. Lines go to stdout unless a `destination` is given.
 */
export function createLogger(options: { service: string; level: string; pretty?: boolean; destination?: DestinationStream }): Logger {
  const settings = {
    level: options.level,
    base: { service: options.service },
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
    ...(options.pretty ? { transport: { target: "pino-pretty", options: { ignore: "pid,hostname", translateTime: "HH:MM:ss" } } } : {}),
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}

export type { Logger };
