import {
  closestToExhaustion,
  current,
  type RateLimitPolicy,
  type RateLimitRecord,
  type RateWindow,
  WINDOW_MS,
  WINDOW_NAMES,
  type WindowName,
  type WindowStatus,
} from "./windows.js";

/**
 * A lease is at most this share of the room left in the user's tightest window: leases are
 * taken only far from a limit, so tokens held by one replica cannot make another refuse a
 * user much before the limit, and near it every request is counted on its own.
 */
export const LEASE_SHARE = 10;
/** The most tokens one lease holds. */
export const LEASE_MAX = 200;
/**
 * The fewest worth a lease: a user whose requests of the last half second or so are fewer
 * (about ten a second or less) is counted request by request, exactly, as before leases.
 */
export const LEASE_MIN = 4;

/**
 * Requests a replica may admit for one user without asking the shared counter: they were
 * counted in the record, in every window, by the compare-and-set that took the lease. Valid
 * until the first of those windows ends; its tokens left then were never used, and are
 * given back (`giveBack`) by the user's next compare-and-set.
 */
export interface RateLease {
  tokens: number;
  /** Each window's start when the lease was counted. */
  starts: Record<WindowName, number>;
  /** Each window's room in the record right after the lease was counted (its tokens counted as used). */
  roomAfter: Record<WindowName, number>;
  /** When the first of its windows ends. */
  untilMs: number;
}

/** Unused tokens of a lease that ran out, to take off the windows they were counted in. */
export type ReturnedTokens = Pick<RateLease, "tokens" | "starts">;

/**
 * Counts a lease of up to `want` tokens in `record` (each window as it stands at `nowMs`):
 * no more than `LEASE_MAX`, nor a `LEASE_SHARE`th of the room left in the tightest window.
 * Null when `want` is under `LEASE_MIN`, or the room allows less than one token.
 */
export function takeLease(
  record: RateLimitRecord | null,
  nowMs: number,
  policy: RateLimitPolicy,
  want: number,
): { next: RateLimitRecord; lease: RateLease } | null {
  if (want < LEASE_MIN) return null;
  const windows = Object.fromEntries(
    WINDOW_NAMES.map((name) => [name, current(record?.[name], name, nowMs)]),
  ) as Record<WindowName, RateWindow>;
  const room = Math.min(...WINDOW_NAMES.map((name) => policy[name] - windows[name].count));
  const tokens = Math.min(want, LEASE_MAX, Math.floor(room / LEASE_SHARE));
  if (tokens < 1) return null;
  const counted = Object.fromEntries(
    WINDOW_NAMES.map((name) => [name, { ...windows[name], count: windows[name].count + tokens }]),
  ) as Record<WindowName, RateWindow>;
  const each = <T>(of: (name: WindowName) => T) =>
    Object.fromEntries(WINDOW_NAMES.map((name) => [name, of(name)])) as Record<WindowName, T>;
  return {
    next: { ...record, ...counted },
    lease: {
      tokens,
      starts: each((name) => counted[name].start_ms),
      roomAfter: each((name) => policy[name] - counted[name].count),
      untilMs: Math.min(...WINDOW_NAMES.map((name) => counted[name].start_ms + WINDOW_MS[name])),
    },
  };
}

/**
 * The record with the returned tokens taken off each window they were counted in, where that
 * window is still the same one (a window that opened since counts none of them). The same
 * record when there is nothing to take off.
 */
export function giveBack(record: RateLimitRecord | null, returned: readonly ReturnedTokens[]): RateLimitRecord | null {
  if (record === null || returned.length === 0) return record;
  let next = record;
  for (const { tokens, starts } of returned) {
    for (const name of WINDOW_NAMES) {
      const window = next[name];
      if (window === undefined || window.start_ms !== starts[name] || window.count === 0) continue;
      next = { ...next, [name]: { ...window, count: Math.max(0, window.count - tokens) } };
    }
  }
  return next;
}

/** Where the user's windows stand for a request just admitted from the lease (`lease.tokens` already taken down). */
export function leaseBinding(lease: RateLease, nowMs: number, policy: RateLimitPolicy): WindowStatus {
  return closestToExhaustion(
    WINDOW_NAMES.map((name) => ({
      window: name,
      limit: policy[name],
      remaining: lease.roomAfter[name] + lease.tokens,
      resetMs: lease.starts[name] + WINDOW_MS[name] - nowMs,
    })),
  );
}
