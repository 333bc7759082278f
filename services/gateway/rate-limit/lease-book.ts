import type { RateLease, ReturnedTokens } from "./lease.js";

/** The span over which a user's recent requests are counted: a lease covers about this much of them. */
const DEMAND_MS = 250;

/** One user's leases on this replica, the unused tokens of those that ran out, and how many requests came lately. */
interface UserLeases {
  /** Valid or not yet looked at, the one ending first first. */
  leases: RateLease[];
  returned: ReturnedTokens[];
  /** The size of the last lease taken: a lease down to half of it is refilled. */
  lastSize: number;
  bucketMs: number;
  inBucket: number;
  inPrevious: number;
}

/**
 * The leases this gateway replica holds of its users' windows (see `lease.ts`), in memory.
 * A user's requests are taken from them while they last; the next compare-and-set takes a
 * new lease as large as the user's requests of the last quarter to half second, and gives
 * back what leases that ran out left unused. Bounded: past `max` users it starts over, and
 * the tokens it held then are neither used nor given back (the user's windows count them
 * until they reset).
 */
export class LeaseBook {
  readonly #users = new Map<string, UserLeases>();

  constructor(private readonly max: number) {}

  /** Takes one token of the user's leases at `nowMs`: the lease it came from (its `tokens` already taken down), or undefined. */
  take(key: string, nowMs: number): RateLease | undefined {
    const user = this.#users.get(key);
    if (!user) return undefined;
    this.#expire(user, nowMs);
    const lease = user.leases.find((each) => each.tokens > 0);
    if (!lease) return undefined;
    lease.tokens -= 1;
    return lease;
  }

  /** Whether the user's leases are down to half the last one (or gone): time to take the next while these last. */
  low(key: string, nowMs: number): boolean {
    const user = this.#users.get(key);
    if (!user) return true;
    this.#expire(user, nowMs);
    const held = user.leases.reduce((sum, lease) => sum + lease.tokens, 0);
    return held <= Math.floor(user.lastSize / 2);
  }

  /** Counts one admitted request of the user (from a lease or not): the size of its next lease follows them. */
  noteAdmitted(key: string, nowMs: number): void {
    const user = this.#userOf(key, nowMs);
    this.#roll(user, nowMs);
    user.inBucket += 1;
  }

  /** How many tokens the user's next compare-and-set should lease: its requests of the last quarter to half second. */
  want(key: string, nowMs: number): number {
    const user = this.#users.get(key);
    if (!user) return 0;
    this.#roll(user, nowMs);
    return user.inBucket + user.inPrevious;
  }

  /** The unused tokens to give back with the user's next compare-and-set. */
  returned(key: string, nowMs: number): readonly ReturnedTokens[] {
    const user = this.#users.get(key);
    if (!user) return [];
    this.#expire(user, nowMs);
    return [...user.returned];
  }

  /** Every token of the user this replica counted and did not use: its leases' and those to give back. */
  unused(key: string, nowMs: number): ReturnedTokens[] {
    const user = this.#users.get(key);
    if (!user) return [];
    this.#expire(user, nowMs);
    return [...user.returned, ...user.leases.map(({ tokens, starts }) => ({ tokens, starts }))];
  }

  /** A compare-and-set landed: it gave `returned` back, and took `lease` (if any). */
  settled(key: string, returned: readonly ReturnedTokens[], lease: RateLease | null, nowMs: number): void {
    const user = this.#users.get(key) ?? (lease ? this.#userOf(key, nowMs) : undefined);
    if (!user) return;
    user.returned = user.returned.filter((each) => !returned.includes(each));
    if (!lease) return;
    user.leases.push(lease);
    user.leases.sort((a, b) => a.untilMs - b.untilMs);
    user.lastSize = lease.tokens;
  }

  /** Leases past their first window's end can serve nothing more: their tokens left go back with the next count. */
  #expire(user: UserLeases, nowMs: number): void {
    while (user.leases.length > 0 && (user.leases[0] as RateLease).untilMs <= nowMs) {
      const ended = user.leases.shift() as RateLease;
      if (ended.tokens > 0) user.returned.push({ tokens: ended.tokens, starts: ended.starts });
    }
    for (let index = user.leases.length - 1; index >= 0; index -= 1) {
      const lease = user.leases[index] as RateLease;
      if (lease.tokens === 0 && lease.untilMs > nowMs) user.leases.splice(index, 1);
    }
  }

  #roll(user: UserLeases, nowMs: number): void {
    const since = nowMs - user.bucketMs;
    if (since < DEMAND_MS) return;
    user.inPrevious = since < 2 * DEMAND_MS ? user.inBucket : 0;
    user.inBucket = 0;
    user.bucketMs = nowMs;
  }

  #userOf(key: string, nowMs: number): UserLeases {
    let user = this.#users.get(key);
    if (user) return user;
    if (this.#users.size >= this.max) this.#users.clear();
    user = { leases: [], returned: [], lastSize: 0, bucketMs: nowMs, inBucket: 0, inPrevious: 0 };
    this.#users.set(key, user);
    return user;
  }
}
