import { setTimeout as delay } from "node:timers/promises";
import { ApiError } from "../../shared/client/index.js";
import { AppError } from "../../shared/errors/index.js";
import { monotonicMs } from "./clock.js";

/** What one closed-loop run measured. */
export interface LoadResult {
  /** Requests started in the measured window that succeeded. */
  ok: number;
  /** Failed requests of the measured window, by error code (`network` for a connection error). */
  errors: Map<string, number>;
  /** The first few distinct failure messages, for the report. */
  errorSamples: string[];
  /** Latency of each successful measured request, in milliseconds. */
  latenciesMs: number[];
  /** From the start of the measured window to the end of its last request. */
  elapsedMs: number;
}

export interface LoadOptions {
  /** Requests in flight at once: each worker sends its next request when the last one answered. */
  concurrency: number;
  /** Requests run but not measured first, so connections and caches are warm. */
  warmupMs?: number;
  /** Length of the measured window; alternatively `requests`. */
  durationMs?: number;
  /** Measured requests in all, when the window is a count rather than a time. */
  requests?: number;
  signal: AbortSignal;
  /** Called a few times a second with what was measured so far. */
  onProgress?: (done: { ok: number; failed: number; elapsedMs: number }) => void;
}

const ERROR_SAMPLES = 5;
const PROGRESS_EVERY_MS = 250;

export function errorCode(error: unknown): string {
  if (error instanceof ApiError || error instanceof AppError) return error.code;
  if (error instanceof TypeError) return "network";
  return error instanceof Error ? error.name : "unknown";
}

function describeError(error: unknown): string {
  if (error instanceof ApiError || error instanceof AppError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * Runs `request` from `concurrency` workers in a closed loop: a warm-up, then a measured
 * window bounded by time or by count. `request(index)` gets a running number, so callers
 * can spread requests over gateways or users.
 */
export async function runClosedLoop(
  options: LoadOptions,
  request: (index: number) => Promise<unknown>,
): Promise<LoadResult> {
  const { concurrency, warmupMs = 0, durationMs, requests, signal, onProgress } = options;
  if ((durationMs === undefined) === (requests === undefined))
    throw new Error("runClosedLoop needs durationMs or requests, not both");
  const result: LoadResult = { ok: 0, errors: new Map(), errorSamples: [], latenciesMs: [], elapsedMs: 0 };
  const started = performance.now();
  const measureFrom = started + warmupMs;
  const measureUntil = durationMs === undefined ? Number.POSITIVE_INFINITY : measureFrom + durationMs;
  let next = 0;
  let measuredStarted = 0;
  let lastEnd = measureFrom;
  let failed = 0;

  const timer = setInterval(
    () => onProgress?.({ ok: result.ok, failed, elapsedMs: Math.max(0, performance.now() - measureFrom) }),
    PROGRESS_EVERY_MS,
  );
  const worker = async (): Promise<void> => {
    while (!signal.aborted) {
      const sentAt = performance.now();
      const measured = sentAt >= measureFrom;
      if (measured && (sentAt >= measureUntil || (requests !== undefined && measuredStarted >= requests))) return;
      if (measured) measuredStarted += 1;
      const index = next++;
      try {
        await request(index);
        const endedAt = performance.now();
        if (!measured) continue;
        result.ok += 1;
        result.latenciesMs.push(endedAt - sentAt);
        lastEnd = Math.max(lastEnd, endedAt);
      } catch (error) {
        if (!measured) continue;
        failed += 1;
        lastEnd = Math.max(lastEnd, performance.now());
        const code = errorCode(error);
        result.errors.set(code, (result.errors.get(code) ?? 0) + 1);
        const sample = describeError(error);
        if (result.errorSamples.length < ERROR_SAMPLES && !result.errorSamples.includes(sample))
          result.errorSamples.push(sample);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    clearInterval(timer);
  }
  result.elapsedMs = lastEnd - measureFrom;
  return result;
}

/** `code ×count` of each failure, for a table cell; `0` when there were none. */
export function formatErrors(errors: ReadonlyMap<string, number>): string {
  if (errors.size === 0) return "0";
  return [...errors].map(([code, count]) => `${code} ×${count}`).join(", ");
}

export function countErrors(errors: ReadonlyMap<string, number>): number {
  let total = 0;
  for (const count of errors.values()) total += count;
  return total;
}

/** What one open-loop step measured. */
export interface OpenLoopResult {
  /** Requests due in the step: rate × duration. */
  due: number;
  /** Requests not sent because `maxInFlight` were still unanswered at their time. */
  shed: number;
  ok: number;
  errors: Map<string, number>;
  errorSamples: string[];
  /** How late each request left against its intended time, in ms: the load generator's own lag. */
  lagMs: number[];
  /** From the first intended time to the last answer. */
  elapsedMs: number;
}

export interface OpenLoopOptions {
  ratePerSecond: number;
  durationMs: number;
  /** Unanswered requests at most; a request due while this many are open is shed, not queued. */
  maxInFlight: number;
  signal: AbortSignal;
  onProgress?: (done: { sent: number; ok: number; failed: number }) => void;
}

/**
 * Sends requests at a fixed rate whatever the answers do (an open loop, as independent
 * clients would): request `i` is due at `start + i / rate`. `request(index, intendedAtMs)`
 * gets its intended time on the monotonic clock, so latency can be taken from it and the
 * generator's own lag does not hide the system's.
 */
export async function runOpenLoop(
  options: OpenLoopOptions,
  request: (index: number, intendedAtMs: number) => Promise<unknown>,
): Promise<OpenLoopResult> {
  const { ratePerSecond, durationMs, maxInFlight, signal, onProgress } = options;
  const due = Math.floor((ratePerSecond * durationMs) / 1000);
  const intervalMs = 1000 / ratePerSecond;
  const result: OpenLoopResult = { due, shed: 0, ok: 0, errors: new Map(), errorSamples: [], lagMs: [], elapsedMs: 0 };
  const inFlight = new Set<Promise<void>>();
  let failed = 0;
  let lastEnd = 0;
  const start = monotonicMs();
  const timer = setInterval(
    () => onProgress?.({ sent: result.lagMs.length, ok: result.ok, failed }),
    PROGRESS_EVERY_MS,
  );
  try {
    for (let index = 0; index < due && !signal.aborted; ) {
      const now = monotonicMs();
      // Everything due by now goes out in this turn; then sleep until the next one is due.
      for (; index < due && start + index * intervalMs <= now; index++) {
        const intendedAtMs = start + index * intervalMs;
        if (inFlight.size >= maxInFlight) {
          result.shed += 1;
          continue;
        }
        result.lagMs.push(now - intendedAtMs);
        const call = request(index, intendedAtMs).then(
          () => {
            result.ok += 1;
          },
          (error: unknown) => {
            failed += 1;
            const code = errorCode(error);
            result.errors.set(code, (result.errors.get(code) ?? 0) + 1);
            const sample = describeError(error);
            if (result.errorSamples.length < ERROR_SAMPLES && !result.errorSamples.includes(sample))
              result.errorSamples.push(sample);
          },
        );
        const tracked: Promise<void> = call.finally(() => {
          inFlight.delete(tracked);
          lastEnd = Math.max(lastEnd, monotonicMs());
        });
        inFlight.add(tracked);
      }
      if (index < due) await delay(Math.max(0, start + index * intervalMs - monotonicMs()));
    }
    await Promise.all(inFlight);
  } finally {
    clearInterval(timer);
  }
  result.elapsedMs = Math.max(lastEnd, start) - start;
  return result;
}
