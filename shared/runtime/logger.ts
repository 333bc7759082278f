import { pino, type Logger } from "pino";

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
];

/** JSON lines for machines; `pretty` (local development only) renders them for people via pino-pretty. */
export function createLogger(options: { service: string; level: string; pretty?: boolean }): Logger {
  return pino({
    level: options.level,
    base: { service: options.service },
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
    ...(options.pretty ? { transport: { target: "pino-pretty", options: { ignore: "pid,hostname", translateTime: "HH:MM:ss" } } } : {}),
  });
}

export type { Logger };
