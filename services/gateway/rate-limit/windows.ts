import { z } from "zod";

/**
 * The fixed windows every user is counted in, with their lengths: the second bounds a
 * burst (so one user's spent minute arrives spread out, not in one blow that every other
 * tenant waits behind), the minute and the hour the sustained rate.
 */
export const WINDOW_MS = { second: 1_000, minute: 60_000, hour: 3_600_000 } as const;
export type WindowName = keyof typeof WINDOW_MS;
export const WINDOW_NAMES = Object.keys(WINDOW_MS) as WindowName[];

/** One window of a user's counter: when it opened (the first request in it) and how many requests it admitted. */
export const RateWindow = z.looseObject({ start_ms: z.number().int(), count: z.number().int().min(0) });
export type RateWindow = z.infer<typeof RateWindow>;

/**
 * A user's counter in `cjs_rate_limits`, changed only by compare-and-set. `second` is
 * absent from a record a replica without that window wrote: it reads as a fresh window.
 */
export const RateLimitRecord = z.looseObject({ second: RateWindow.optional(), minute: RateWindow, hour: RateWindow });
export type RateLimitRecord = z.infer<typeof RateLimitRecord>;

/** Requests admitted per window. */
export type RateLimitPolicy = Record<WindowName, number>;

/** Where one window stands for the caller, as the RateLimit headers report it. */
export interface WindowStatus {
  window: WindowName;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets (a fresh window opens at the next request after it). */
  resetMs: number;
}

export type RateDecision =
  | {
      admitted: true;
      /** The record to write (compare-and-set on the revision read). */
      next: RateLimitRecord;
      /** The window closest to exhaustion after counting this request. */
      binding: WindowStatus;
    }
  | {
      admitted: false;
      /** The exhausted window that resets last: the one the caller must wait for. */
      binding: WindowStatus;
      /** Whole seconds, rounded up, until every exhausted window has reset: a retry then is admitted. */
      retryAfterSeconds: number;
    };

/** The window as it stands at `nowMs`: a window past its end is replaced by an empty one opening now. */
export function current(window: RateWindow | undefined, name: WindowName, nowMs: number): RateWindow {
  if (window === undefined || nowMs >= window.start_ms + WINDOW_MS[name]) return { start_ms: nowMs, count: 0 };
  return window;
}

function statusOf(name: WindowName, window: RateWindow, limit: number, nowMs: number): WindowStatus {
  return {
    window: name,
    limit,
    remaining: Math.max(0, limit - window.count),
    resetMs: window.start_ms + WINDOW_MS[name] - nowMs,
  };
}

/** The window with the fewest requests left; among equals, the one that resets last. */
export function closestToExhaustion(statuses: WindowStatus[]): WindowStatus {
  return statuses.reduce((best, status) =>
    status.remaining < best.remaining || (status.remaining === best.remaining && status.resetMs > best.resetMs)
      ? status
      : best,
  );
}

/** The window closest to exhaustion as the record stands at `nowMs`, counting nothing. */
export function headroomOf(record: RateLimitRecord | null, nowMs: number, policy: RateLimitPolicy): WindowStatus {
  return closestToExhaustion(
    WINDOW_NAMES.map((name) => statusOf(name, current(record?.[name], name, nowMs), policy[name], nowMs)),
  );
}

/**
 * Counts one request against fixed windows that open at a user's first request in them.
 * A request is admitted only if every window has room, and then counts in every window;
 * a refused request counts nowhere. Pure: the caller reads the record, decides, and
 * writes `next` by compare-and-set.
 */
export function decide(record: RateLimitRecord | null, nowMs: number, policy: RateLimitPolicy): RateDecision {
  const windows = Object.fromEntries(
    WINDOW_NAMES.map((name) => [name, current(record?.[name], name, nowMs)]),
  ) as Record<WindowName, RateWindow>;
  const exhausted = WINDOW_NAMES.filter((name) => windows[name].count >= policy[name]).map((name) =>
    statusOf(name, windows[name], policy[name], nowMs),
  );
  if (exhausted.length > 0) {
    const binding = closestToExhaustion(exhausted);
    return { admitted: false, binding, retryAfterSeconds: Math.max(1, Math.ceil(binding.resetMs / 1000)) };
  }
  // Spread from the stored record and its windows: fields a newer replica wrote stay (a window that reset starts afresh).
  const counted = Object.fromEntries(
    WINDOW_NAMES.map((name) => [name, { ...windows[name], count: windows[name].count + 1 }]),
  ) as Record<WindowName, RateWindow>;
  const next: RateLimitRecord = { ...record, ...counted };
  const binding = closestToExhaustion(WINDOW_NAMES.map((name) => statusOf(name, counted[name], policy[name], nowMs)));
  return { admitted: true, next, binding };
}

/**
 * Decides `count` requests that arrived together, one after another as `decide` would:
 * each sees the counts of those before it. `next` is the record to write, or null when
 * none was admitted (nothing to write).
 */
export function decideMany(
  record: RateLimitRecord | null,
  nowMs: number,
  policy: RateLimitPolicy,
  count: number,
): { decisions: RateDecision[]; next: RateLimitRecord | null } {
  const decisions: RateDecision[] = [];
  let state = record;
  let next: RateLimitRecord | null = null;
  for (let index = 0; index < count; index += 1) {
    const decision = decide(state, nowMs, policy);
    decisions.push(decision);
    if (decision.admitted) state = next = decision.next;
  }
  return { decisions, next };
}

/**
 * The RateLimit fields of draft-ietf-httpapi-ratelimit-headers (the `-Limit`, `-Remaining`,
 * `-Reset`, `-Policy` form): the first three describe the window closest to exhaustion,
 * the policy lists every window.
 */
export function rateLimitHeaders(policy: RateLimitPolicy, binding: WindowStatus): Record<string, string> {
  return {
    "ratelimit-limit": String(binding.limit),
    "ratelimit-remaining": String(binding.remaining),
    "ratelimit-reset": String(Math.max(0, Math.ceil(binding.resetMs / 1000))),
    "ratelimit-policy": WINDOW_NAMES.map((name) => `${policy[name]};w=${WINDOW_MS[name] / 1000}`).join(", "),
  };
}
