/** How the SDK retries answers that say "try again later" (429, 503) and lost connections. */
export interface RetryPolicy {
  /** Retries after the first try; 0 turns retrying off. Default 4. */
  maxRetries: number;
  /** The first backoff when the answer names no `Retry-After`. Default 250 ms. */
  baseDelayMs: number;
  /** No single wait is longer, whatever `Retry-After` says. Default 30 s. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 4, baseDelayMs: 250, maxDelayMs: 30_000 };

/**
 * The wait before retry number `retry` (from 1): what `Retry-After` asks, else an
 * exponential backoff; plus up to 20 % jitter so that many clients refused at once do not
 * all come back in the same instant; never more than `maxDelayMs`.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  retry: number,
  retryAfterSeconds: number | undefined,
  random: () => number = Math.random,
): number {
  const base = retryAfterSeconds !== undefined ? retryAfterSeconds * 1000 : policy.baseDelayMs * 2 ** (retry - 1);
  return Math.min(policy.maxDelayMs, Math.round(base * (1 + 0.2 * random())));
}

/** Waits `ms`, or rejects at once with the signal's reason when it aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
