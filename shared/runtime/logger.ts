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
  'req.headers["x-api-key"]',
  "req.headers.cookie",
  "headers.authorization",
  'headers["x-api-key"]',
  "secret",
  "*.secret",
  "CJS_STRIPE_SECRET_KEY",
  "*.CJS_STRIPE_SECRET_KEY",
  "CJS_STRIPE_WEBHOOK_SECRET",
  "*.CJS_STRIPE_WEBHOOK_SECRET",
  'req.headers["stripe-signature"]',
  'req.headers["cjs-sandbox-signature"]',
];

/** A query parameter that carries a credential (a signed URL's `signature`, a token, a key), up to the end of its value. */
const CREDENTIAL_PARAMETER =
  /([?&](?:signature|token|access_token|refresh_token|api_key|apikey|key|password|secret)=)[^&\s"'\\]*/gi;

/** Blanks the value of every credential query parameter in a log line, wherever a URL ended up (an error message, a library's log). */
export function scrubCredentialParameters(line: string): string {
  return line.replace(CREDENTIAL_PARAMETER, "$1[redacted]");
}

/**
 * The standard error serializer, without `rawPacket`: the bytes an HTTP parser error
 * carries are the raw request, its URL's query string (a signature) and headers included.
 */
function serializeError(error: Error): Record<string, unknown> {
  const { rawPacket: _rawPacket, ...serialized } = pino.stdSerializers.err(error) as Record<string, unknown>;
  return serialized;
}

/**
 * JSON lines for machines; `pretty` (local development only) renders them for people via
 * pino-pretty. Lines go to stdout unless a `destination` is given. Secrets stay out: the
 * fields above are redacted, errors lose their raw request bytes, and the value of a
 * credential query parameter is blanked in every line whatever put it there.
 */
export function createLogger(options: {
  service: string;
  level: string;
  pretty?: boolean;
  destination?: DestinationStream;
}): Logger {
  const settings = {
    level: options.level,
    base: { service: options.service },
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
    serializers: { err: serializeError },
    hooks: { streamWrite: scrubCredentialParameters },
    timestamp: pino.stdTimeFunctions.isoTime,
    ...(options.pretty
      ? { transport: { target: "pino-pretty", options: { ignore: "pid,hostname", translateTime: "HH:MM:ss" } } }
      : {}),
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}

export type { Logger };
