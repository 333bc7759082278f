import type { JobError, RetryPolicy } from "../../../shared/contract/index.js";

/** How an attempt failed, as the retry policy reads it. */
export interface AttemptFailure {
  exit_code: number | null;
  error: JobError | null;
}

/**
 * Whether a failed attempt is one the policy retries: without lists every failure is; with
 * `on_exit_codes` and/or `on_codes`, a failure whose exit code or error code is in either.
 */
export function retryMatches(policy: RetryPolicy, failure: AttemptFailure): boolean {
  if (!policy.on_exit_codes && !policy.on_codes) return true;
  const byExit = failure.exit_code !== null && (policy.on_exit_codes?.includes(failure.exit_code) ?? false);
  const byCode = failure.error !== null && (policy.on_codes?.includes(failure.error.code) ?? false);
  return byExit || byCode;
}

/**
 * The wait before retry number `retryCount + 1`, in ms: `initial_seconds × factor^retryCount`,
 * capped at `max_seconds`, plus a random share of it up to `jitter` (`random` in [0, 1)),
 * so the retries of many jobs that failed together spread out.
 */
export function backoffMs(backoff: RetryPolicy["backoff"], retryCount: number, random: () => number): number {
  const seconds = Math.min(backoff.max_seconds, backoff.initial_seconds * backoff.factor ** retryCount);
  return Math.round(seconds * (1 + backoff.jitter * random()) * 1000);
}
