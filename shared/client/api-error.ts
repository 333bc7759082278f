import { errorSpec, isErrorCode } from "../errors/index.js";

/**
 * What the service answered with an error envelope, over HTTP or the NATS node plane: match
 * on `code` (stable), show `message` (for people). A code this build does not know is passed
 * through as it is, so a newer server's codes reach the caller. The one error type of the
 * programs that call the service (the SDK, the CLI, the agent); the services' own is `AppError`.
 */
export class ApiError extends Error {
  readonly code: string;
  /** The HTTP status (0 when no answer arrived; over NATS, the status the code stands for). */
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

/**
 * Whether the error catalogue says a retry may help with a refusal of this code. A code this
 * build does not know (a newer service's) counts as an unexpected fault, which a retry may mend.
 */
export function mayRetryCode(code: string): boolean {
  return !isErrorCode(code) || errorSpec(code).retryable;
}
