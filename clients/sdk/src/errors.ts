/**
 * What the service answered with an error envelope: match on `code` (stable), show
 * `message` (for people). A code this SDK does not know yet is passed through as it is,
 * so a newer server's codes reach the caller.
 */
export class ApiError extends Error {
  readonly code: string;
  /** The HTTP status (0 when no answer arrived). */
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  /** The `X-Request-ID` of the answer: quote it when reporting a problem. */
  readonly requestId: string | undefined;
  /** `Retry-After`, in seconds, when the service said when to try again. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    fields: {
      code: string;
      message: string;
      status: number;
      details?: Record<string, unknown> | undefined;
      requestId?: string | undefined;
      retryAfterSeconds?: number | undefined;
    },
    options?: { cause?: unknown },
  ) {
    super(fields.message, options);
    this.name = "ApiError";
    this.code = fields.code;
    this.status = fields.status;
    this.details = fields.details;
    this.requestId = fields.requestId;
    this.retryAfterSeconds = fields.retryAfterSeconds;
  }
}

/** The request never got an answer (connection refused or reset, DNS): `code` is `network.error`. */
export class NetworkError extends ApiError {
  constructor(cause: unknown) {
    super(
      {
        code: "network.error",
        status: 0,
        message: `The service could not be reached: ${cause instanceof Error ? cause.message : String(cause)}`,
      },
      { cause },
    );
    this.name = "NetworkError";
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
