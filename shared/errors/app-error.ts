import { type ErrorCode, errorSpec, isErrorCode } from "./catalogue.js";

/** Structured, JSON-safe details attached to an error. */
export type ErrorDetails = Record<string, unknown>;

/** The serialised form of an error: what crosses NATS and what the HTTP envelope carries. */
export interface ErrorData {
  code: ErrorCode;
  message: string;
  details?: ErrorDetails;
  /** Seconds a caller should wait before retrying, when the catalogue says a retry may help. */
  retry_after_seconds?: number;
}

/** The one error type of the project: every failure a caller can see is an AppError. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ErrorCode,
    message?: string,
    options: { details?: ErrorDetails; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(message ?? errorSpec(code).summary, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get httpStatus(): number {
    return errorSpec(this.code).http;
  }

  toData(): ErrorData {
    const data: ErrorData = { code: this.code, message: this.message };
    if (this.details !== undefined) data.details = this.details;
    if (this.retryAfterSeconds !== undefined) data.retry_after_seconds = this.retryAfterSeconds;
    return data;
  }

  /** Rebuilds an error that crossed NATS as data; an unknown code becomes an internal error. */
  static fromData(data: unknown): AppError {
    const candidate = data as Partial<ErrorData> | null;
    if (!candidate || !isErrorCode(candidate.code) || typeof candidate.message !== "string") {
      return new AppError("internal.error");
    }
    return new AppError(candidate.code, candidate.message, {
      ...(candidate.details !== undefined ? { details: candidate.details } : {}),
      ...(typeof candidate.retry_after_seconds === "number"
        ? { retryAfterSeconds: candidate.retry_after_seconds }
        : {}),
    });
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
