import { setTimeout as sleep } from "node:timers/promises";
import { ApiError, mayRetryCode } from "../../shared/client/index.js";
import type { Logger } from "../../shared/runtime/index.js";

export const BACKOFF_FIRST_MS = 100;
export const BACKOFF_MAX_MS = 10_000;
/** A `Retry-After` longer than this is not waited out in full. */
const RETRY_AFTER_MAX_MS = 60_000;

/**
 * Exponential back-off with jitter: each delay is drawn between half and all of the
 * current step, which doubles from 100 ms to a 10 s cap, so agents that lost the
 * gateway together do not come back in step. A longer `Retry-After` wins.
 */
export class Backoff {
  private stepMs = BACKOFF_FIRST_MS;

  constructor(private readonly random: () => number = Math.random) {}

  next(error?: unknown): number {
    const delayMs = this.stepMs / 2 + (this.random() * this.stepMs) / 2;
    this.stepMs = Math.min(this.stepMs * 2, BACKOFF_MAX_MS);
    const retryAfterMs =
      error instanceof ApiError && error.retryAfterSeconds
        ? Math.min(error.retryAfterSeconds * 1000, RETRY_AFTER_MAX_MS)
        : 0;
    return Math.max(delayMs, retryAfterMs);
  }

  reset(): void {
    this.stepMs = BACKOFF_FIRST_MS;
  }
}

/**
 * Whether a failed call may succeed if sent again: an envelope code the catalogue calls
 * retryable (`service.unavailable`, `rate.limited`, `internal.error`, …) or does not know
 * (a newer service's), or no envelope at all (connection refused or reset, a timeout).
 */
export function isRetryable(error: unknown): boolean {
  return !(error instanceof ApiError) || mayRetryCode(error.code);
}

/** The envelope code of a failure, or null when there was no envelope. */
export function errorCode(error: unknown): string | null {
  return error instanceof ApiError ? error.code : null;
}

/** A short account of a failure for the log (never a stack for an envelope error). */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return `${error.code}: ${error.message}`;
  if (error instanceof Error) {
    const cause = (error.cause as { code?: unknown; message?: unknown } | undefined) ?? undefined;
    const detail =
      typeof cause?.code === "string" ? cause.code : typeof cause?.message === "string" ? cause.message : undefined;
    return detail ? `${error.message} (${detail})` : error.message;
  }
  return String(error);
}

export interface RetryOptions {
  /** Names the call in log lines. */
  what: string;
  logger: Logger;
  /** Aborting stops the retries: the pending wait or call ends with the abort reason. */
  signal: AbortSignal;
  /** Give up (throw the last error) once this long has passed since the first try. */
  giveUpAfterMs?: number;
}

/** Runs `call` until it succeeds; a retryable failure is tried again after a back-off, any other is thrown. */
export async function retrying<T>(call: () => Promise<T>, options: RetryOptions): Promise<T> {
  const backoff = new Backoff();
  const startedMs = performance.now();
  for (let failures = 1; ; failures += 1) {
    options.signal.throwIfAborted();
    try {
      return await call();
    } catch (error) {
      options.signal.throwIfAborted();
      if (!isRetryable(error)) throw error;
      if (options.giveUpAfterMs !== undefined && performance.now() - startedMs > options.giveUpAfterMs) throw error;
      const delayMs = backoff.next(error);
      // The first failure and then every tenth: a gateway down for minutes does not flood the log.
      if (failures === 1 || failures % 10 === 0) {
        options.logger.warn(
          { error: describeError(error), failures, retry_in_ms: Math.round(delayMs) },
          `${options.what} failed; trying again`,
        );
      }
      await sleep(delayMs, undefined, { signal: options.signal });
    }
  }
}
