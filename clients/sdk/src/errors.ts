import { ApiError } from "../../../shared/client/index.js";

export { ApiError };

/** Codes of a certificate or handshake that failed: the same answer comes every time. */
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|UNABLE_TO_(GET|VERIFY)_|EPROTO$)/;

/** What went wrong, in words, by the code Node gives the failure. */
const REASONS: Array<[test: (code: string) => boolean, words: string]> = [
  [(code) => code === "ECONNREFUSED", "connection refused"],
  [(code) => code === "ENOTFOUND", "host name not found (DNS)"],
  [(code) => code === "EAI_AGAIN", "host name lookup failed for now (DNS)"],
  [(code) => TLS_CODE.test(code), "TLS handshake failed"],
  [(code) => code === "ECONNRESET" || code === "UND_ERR_SOCKET", "connection closed by the other side"],
  [(code) => code === "ETIMEDOUT" || code === "UND_ERR_CONNECT_TIMEOUT", "connection timed out"],
];

/** The innermost cause of a failed fetch (undici wraps it: `fetch failed` ← `connect ECONNREFUSED …`). */
function rootCause(error: unknown): unknown {
  let current = error;
  for (let depth = 0; depth < 8; depth += 1) {
    const next = (current as { cause?: unknown } | null)?.cause;
    if (next === undefined || next === null) return current;
    current = next;
  }
  return current;
}

/** The failure's own words: a message, or those of each address tried (a name with an IPv6 and an IPv4 address). */
function causeText(cause: unknown): string {
  if (cause instanceof AggregateError && cause.errors.length > 0)
    return [...new Set(cause.errors.map((each: unknown) => causeText(each)))].join("; ");
  if (cause instanceof Error) return cause.message || (cause as { code?: string }).code || cause.name;
  return String(cause);
}

/** A URL without its query: a signed URL's signature is a credential and stays out of messages. */
export function withoutQuery(url: string): string {
  const query = url.search(/[?#]/);
  return query === -1 ? url : url.slice(0, query);
}

/**
 * The request never got an answer (connection refused or reset, DNS, TLS): `code` is
 * `network.error`. The message names the URL and the cause; `reason` is Node's code of it
 * (`ECONNREFUSED`, `ENOTFOUND`, a certificate's), when there is one.
 */
export class NetworkError extends ApiError {
  /** The URL called, without its query. */
  readonly url: string | undefined;
  readonly reason: string | undefined;
  /** False for a failure that a retry cannot mend (an unknown host name, a certificate refused). */
  readonly transient: boolean;

  constructor(cause: unknown, request?: { method: string; url: string }) {
    const root = rootCause(cause);
    const code = (root as { code?: unknown } | null)?.code;
    const reason = typeof code === "string" ? code : undefined;
    const words = reason === undefined ? undefined : REASONS.find(([test]) => test(reason))?.[1];
    const detail = words === undefined ? causeText(root) : `${words} (${causeText(root)})`;
    const url = request === undefined ? undefined : withoutQuery(request.url);
    super(
      {
        code: "network.error",
        status: 0,
        message:
          url === undefined ? `The service could not be reached: ${detail}` : `Could not reach ${url}: ${detail}`,
      },
      { cause },
    );
    this.name = "NetworkError";
    this.url = url;
    this.reason = reason;
    this.transient = !(reason === "ENOTFOUND" || (reason !== undefined && TLS_CODE.test(reason)));
  }
}

/** Downloaded bytes whose SHA-256 or length is not what the service recorded. */
export class IntegrityError extends Error {
  constructor(
    message: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(message);
    this.name = "IntegrityError";
  }
}
