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

/**
 * The failures in a row of one call sent again and again (a loop's poll or heartbeat, a
 * retried call): each waits a back-off; the first and then every tenth is logged, so a
 * gateway down for minutes does not flood the log.
 */
export class FailureStreak {
  #failures = 0;
  readonly #backoff = new Backoff();

  constructor(
    private readonly logger: Logger,
    /** Names the call in log lines: `<what> failed; trying again`. */
    private readonly what: string,
  ) {}

  /** The call failed: answers how long to wait before sending it again. */
  failed(error: unknown): number {
    this.#failures += 1;
    const delayMs = this.#backoff.next(error);
    if (this.#failures === 1 || this.#failures % 10 === 0) {
      this.logger.warn(
        { error: describeError(error), failures: this.#failures, retry_in_ms: Math.round(delayMs) },
        `${this.what} failed; trying again`,
      );
    }
    return delayMs;
  }

  /** The call was answered: the next failure starts a new streak. */
  answered(): void {
    if (this.#failures > 0) this.logger.info({ failures: this.#failures }, `${this.what}s answered again`);
    this.#failures = 0;
    this.#backoff.reset();
  }
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
  const streak = new FailureStreak(options.logger, options.what);
  const startedMs = performance.now();
  for (;;) {
    options.signal.throwIfAborted();
    try {
      return await call();
    } catch (error) {
      options.signal.throwIfAborted();
      if (!isRetryable(error)) throw error;
      if (options.giveUpAfterMs !== undefined && performance.now() - startedMs > options.giveUpAfterMs) throw error;
      await sleep(streak.failed(error), undefined, { signal: options.signal });
    }
  }
}
