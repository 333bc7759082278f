import { JetStreamApiError, JetStreamError } from "@nats-io/jetstream";
import { errors as natsErrors } from "@nats-io/transport-node";
import { AppError, isAppError } from "../errors/index.js";

const TRANSPORT_ERRORS = [
  natsErrors.TimeoutError,
  natsErrors.RequestError,
  natsErrors.NoRespondersError,
  natsErrors.ConnectionError,
  natsErrors.ClosedConnectionError,
  natsErrors.DrainingConnectionError,
];

/**
 * True for a failure of NATS itself (no answer, no connection, JetStream not ready — a
 * 503 from the JetStream API, as while a cluster elects a leader), as opposed to a bug.
 */
export function isNatsUnavailable(error: unknown): boolean {
  if (TRANSPORT_ERRORS.some((type) => error instanceof type) || error instanceof JetStreamError) return true;
  if (error instanceof JetStreamApiError && error.status === 503) return true;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== error && isNatsUnavailable(cause);
}

/** True for a request that found no subscriber on its subject (the error, or one it was caused by). */
export function foundNoResponder(error: unknown): boolean {
  if (error instanceof natsErrors.NoRespondersError) return true;
  if (error instanceof natsErrors.RequestError && error.isNoResponders()) return true;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== error && foundNoResponder(cause);
}

/**
 * True for a failure that may pass by itself: NATS unavailable, or JetStream refusing a
 * request while its leaders settle (a cluster forming or a leader moving). Only for
 * idempotent calls, retried a bounded number of times: a refusal that lasts looks the same.
 */
export function mayPassSoon(error: unknown): boolean {
  if (isNatsUnavailable(error) || error instanceof JetStreamApiError) return true;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== error && mayPassSoon(cause);
}

/**
 * What a caller should see for an error thrown while serving a request: an AppError as it
 * is, a NATS outage as a retryable `service.unavailable`, anything else as `internal.error`.
 */
export function asServiceError(error: unknown): AppError {
  if (isAppError(error)) return error;
  if (isNatsUnavailable(error))
    return new AppError("service.unavailable", "The message bus did not answer; try again shortly.", {
      retryAfterSeconds: 1,
    });
  return new AppError("internal.error");
}
