import { pino, type Logger } from "pino";

/** Fields that may carry a secret; pino replaces them wherever they appear in a log object. */
const REDACTED_PATHS = [
  "password",
  "*.password",
  "key",
  "*.key",
  "code",
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

export function createLogger(options: { service: string; level: string }): Logger {
  return pino({
    level: options.level,
    base: { service: options.service },
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

export type { Logger };
