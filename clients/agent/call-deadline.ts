/**
 * Runs `call` with a signal that aborts when the caller's `signal` does or once
 * `timeoutMs` has passed, whichever comes first; the timeout's reason is a
 * `TimeoutError` DOMException, as `AbortSignal.timeout` gives.
 *
 * The deadline is a plain timer, cleared when the call settles. On Node 20 a signal made
 * by `AbortSignal.any` from an `AbortSignal.timeout` may stop firing once garbage
 * collection has run, which left a call to a server that never answers waiting forever.
 */
export async function withDeadline<T>(
  timeoutMs: number,
  signal: AbortSignal | undefined,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  signal?.throwIfAborted();
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`The call did not answer within ${timeoutMs} ms.`, "TimeoutError")),
    timeoutMs,
  );
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    return await call(controller.signal);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}
