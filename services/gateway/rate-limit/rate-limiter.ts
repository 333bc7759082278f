import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { AppError, isAppError } from "../../../shared/errors/index.js";
import { BUCKETS, ensureBuckets, JsonBucket, kvKey, RecordBusyError } from "../../../shared/nats/index.js";
import type { Clock } from "../../../shared/runtime/index.js";
import type { Caller } from "../identity/authenticator.js";
import { CounterCopies } from "./counter-copies.js";
import { giveBack, leaseBinding, type RateLease, takeLease } from "./lease.js";
import { LeaseBook } from "./lease-book.js";
import { KeyedPacer } from "./pacer.js";
import { rateLimited, rateLimitFailOpen, rateLimitLeased, rateLimitPaced } from "./rate-limit-metrics.js";
import {
  decideMany,
  headroomOf,
  rateLimitHeaders,
  RateLimitRecord,
  type RateDecision,
  type RateLimitPolicy,
  type WindowStatus,
} from "./windows.js";

/**
 * Compare-and-set tries per batch. Each replica writes one batch of a user at a time, so a
 * conflict means another replica counted that user's requests in between. A batch that
 * loses every try is let through uncounted: contention is the service's, never the user's.
 */
const CAS_TRIES = 50;
/** The pause after the n-th lost try, up to this, jittered: replicas that collided do not collide again in step. */
const CAS_PAUSE_MAX_MS = 20;

function casPauseMs(write: number): number {
  return Math.round(Math.random() * Math.min(CAS_PAUSE_MAX_MS, write * 2));
}
/** How long the limiter waits for one KV operation: a stalled store must not stall requests. */
const KV_TIMEOUT_MS = 1000;
/** After a failure to reach the counters, requests pass uncounted at once for this long before the next try. */
const BYPASS_MS = 5000;

const PER = { second: "a second", minute: "a minute", hour: "an hour" } as const;
/** Users refused and remembered at most; past it the memo starts over (it saves reads, it decides nothing). */
const REFUSALS_REMEMBERED = 100_000;
/** How long a user whose counter another replica also writes is read before each count. */
const SHARED_COUNTER_MS = 10_000;

/** A user whose window is used up: refused without a read until it resets (counts only grow within a window). */
interface Refusal {
  untilMs: number;
  window: WindowStatus["window"];
  limit: number;
}

/** A request waiting for its decision in a user's batch. */
interface Waiter {
  resolve(decision: Admission | null): void;
  reject(error: unknown): void;
}

/** A request's answer from the counter: a decision of its batch, or a token of a lease. */
type Admission =
  | { admitted: true; binding: WindowStatus }
  | { admitted: false; binding: WindowStatus; retryAfterSeconds: number };

/** Where the RateLimit headers go (a fastify reply, or the headers of a NATS answer). */
export interface HeaderSink {
  header(name: string, value: string): unknown;
}

/**
 * Per-user request limits shared by every gateway replica: one counter per application
 * and user in `cjs_rate_limits`, changed by compare-and-set, so two replicas together
 * admit no more than the limit. Only user credentials (a bearer JWT or a user's API key)
 * are counted; node keys are not (see docs/api.md, "Rate limits").
 *
 * A replica counts one user's concurrent requests in batches: while one compare-and-set
 * for the user is under way, the requests that arrive wait and are all counted by the
 * next one. Without it, many requests of one user at once would mostly lose their
 * compare-and-set to each other and try again and again.
 *
 * A user whose requests keep coming is counted ahead: each compare-and-set also counts a
 * lease of tokens, about the user's requests of the last quarter to half second, and the
 * requests that follow are admitted from it without waiting for the counter; the next lease
 * is taken while half of this one is left (decision 0093). Leases are taken only far from a
 * limit (`lease.ts`), and what one leaves unused is given back.
 */
export class RateLimiter {
  private bypassUntilMs = Number.NEGATIVE_INFINITY;
  /** Per counter key, the requests waiting for the next batch; present while a batch is under way. */
  private readonly waiting = new Map<string, Waiter[]>();
  /** Per counter key, a used-up window and when it resets: refusing again costs no round trip to the counters. */
  private readonly refused = new Map<string, Refusal>();
  /**
   * Spreads each user's admitted requests over its second on this replica: up to a fifth
   * of the second's limit go at once, the rest one every 1/limit of a second, so a user
   * spending its second in one blow does not put every other tenant behind it.
   */
  private readonly pacer: KeyedPacer;
  /** Each user's counter as this replica last wrote it: the next batch starts from it instead of a read. */
  private readonly copies = new CounterCopies<RateLimitRecord>({
    max: REFUSALS_REMEMBERED,
    sharedForMs: SHARED_COUNTER_MS,
  });
  /** Each user's tokens counted ahead by this replica. */
  private readonly leases = new LeaseBook(REFUSALS_REMEMBERED);

  constructor(
    private readonly deps: {
      bucket: JsonBucket<typeof RateLimitRecord>;
      clock: Clock;
      logger: Logger;
      policy: RateLimitPolicy;
    },
  ) {
    const perSecond = deps.policy.second;
    this.pacer = new KeyedPacer({ perSecond, burst: Math.max(1, Math.ceil(perSecond / 5)) });
  }

  /** Creates the shared counter bucket if needed and opens it with a short timeout of its own. */
  static async open(
    nc: NatsConnection,
    options: { replicas: number; policy: RateLimitPolicy; clock: Clock; logger: Logger },
  ): Promise<RateLimiter> {
    await ensureBuckets(nc, [BUCKETS.rateLimits], { replicas: options.replicas, logger: options.logger });
    const kv = await new Kvm(jetstream(nc, { timeout: KV_TIMEOUT_MS })).open(BUCKETS.rateLimits);
    return new RateLimiter({
      bucket: new JsonBucket(kv, RateLimitRecord),
      clock: options.clock,
      logger: options.logger,
      policy: options.policy,
    });
  }

  /** Whether requests of this caller count against a user's budget. */
  static counts(caller: Caller): boolean {
    return caller.credential.kind === "jwt" || caller.credential.kind === "api_key";
  }

  /**
   * Counts one request of `caller` and writes the RateLimit headers on `reply`. Throws
   * `rate.limited` (with its `Retry-After`) only when a window is exhausted. If the counters
   * cannot be reached (NATS away, a timeout), the request is let through uncounted
   * (fail-open), and so is every request for the next BYPASS_MS, with one warning and
   * `cjs_rate_limit_fail_open_total`. A batch whose every compare-and-set lost is let
   * through uncounted too, counted in the same metric.
   */
  async admit(caller: Caller, reply: HeaderSink): Promise<void> {
    if (RateLimiter.counts(caller)) await this.admitUser(caller.app_id, caller.user_id, reply);
  }

  /** `admit` for a user known without a credential of theirs: the user a signed log stream URL reads as. */
  async admitUser(appId: string, userId: string, reply: HeaderSink): Promise<void> {
    const { policy, clock } = this.deps;
    if (clock.now() < this.bypassUntilMs) {
      rateLimitFailOpen.inc();
      return;
    }
    const key = kvKey(appId, userId);
    const known = this.refused.get(key);
    if (known) {
      const resetMs = known.untilMs - clock.now();
      if (resetMs > 0) {
        const binding = { window: known.window, limit: known.limit, remaining: 0, resetMs };
        for (const [name, value] of Object.entries(rateLimitHeaders(policy, binding))) reply.header(name, value);
        throw this.refusal(known.window, known.limit, Math.ceil(resetMs / 1000));
      }
      this.refused.delete(key);
    }
    let decision: Admission | null;
    try {
      decision = this.fromLease(key) ?? (await this.count(key));
    } catch (error) {
      // A key of the wrong shape is a fault of ours; anything else is the store's hiccup.
      if (isAppError(error) && error.code !== "service.unavailable") throw error;
      this.failOpen(error);
      return;
    }
    if (decision === null) {
      rateLimitFailOpen.inc();
      return;
    }
    for (const [name, value] of Object.entries(rateLimitHeaders(policy, decision.binding))) reply.header(name, value);
    if (decision.admitted) {
      this.leases.noteAdmitted(key, clock.now());
      if (await this.pacer.take(key, 1)) rateLimitPaced.inc();
      return;
    }
    const { window, limit } = decision.binding;
    if (this.refused.size >= REFUSALS_REMEMBERED) this.refused.clear();
    this.refused.set(key, { untilMs: clock.now() + decision.retryAfterSeconds * 1000, window, limit });
    throw this.refusal(window, limit, decision.retryAfterSeconds);
  }

  /** A token of the user's lease, if this replica holds one; the next lease is taken while half of this one is left. */
  private fromLease(key: string): Admission | undefined {
    const { clock, policy } = this.deps;
    const lease = this.leases.take(key, clock.now());
    if (!lease) return undefined;
    rateLimitLeased.inc();
    if (this.leases.low(key, clock.now())) this.refill(key);
    return { admitted: true, binding: leaseBinding(lease, clock.now(), policy) };
  }

  private refusal(window: WindowStatus["window"], limit: number, retryAfterSeconds: number): AppError {
    rateLimited.inc({ window });
    return new AppError(
      "rate.limited",
      `Rate limit reached: ${limit} requests ${PER[window]} for this user; retry in ${retryAfterSeconds} s.`,
      { retryAfterSeconds, details: { window, limit } },
    );
  }

  /**
   * The caller's window closest to exhaustion, read and not counted (a dry run shows it);
   * the tokens this replica counted ahead for the caller are room. Null when the caller's
   * requests are not counted or the counters cannot be read now.
   */
  async headroom(caller: Caller): Promise<WindowStatus | null> {
    const { bucket, clock, policy } = this.deps;
    if (!RateLimiter.counts(caller) || clock.now() < this.bypassUntilMs) return null;
    const key = kvKey(caller.app_id, caller.user_id);
    try {
      const stored = await bucket.get(key);
      return headroomOf(giveBack(stored?.value ?? null, this.leases.unused(key, clock.now())), clock.now(), policy);
    } catch {
      return null;
    }
  }

  /** How many requests of the user the shared counter counts ahead on this replica's account (leased, not yet used). */
  countedAhead(appId: string, userId: string): number {
    return this.leases.unused(kvKey(appId, userId), this.deps.clock.now()).reduce((sum, each) => sum + each.tokens, 0);
  }

  /** The decision for one request, counted in the user's next batch; null when the batch lost every compare-and-set. */
  private count(key: string): Promise<Admission | null> {
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(key);
      if (queue) {
        queue.push({ resolve, reject });
        return;
      }
      this.waiting.set(key, [{ resolve, reject }]);
      void this.serveBatches(key);
    });
  }

  /** Takes the user's next lease while the last one lasts, unless a count of the user is under way (it takes one). */
  private refill(key: string): void {
    if (this.waiting.has(key)) return;
    this.waiting.set(key, []);
    void this.serveBatches(key);
  }

  /** Counts the key's waiting requests (none for a refill), one batch after another, until none is left. */
  private async serveBatches(key: string): Promise<void> {
    let batch = this.waiting.get(key) ?? [];
    do {
      this.waiting.set(key, []);
      try {
        const decisions = await this.countBatch(key, batch.length);
        batch.forEach((waiter, index) => waiter.resolve(decisions?.[index] ?? null));
      } catch (error) {
        // A refill's failure is no request's: the next request that finds no lease counts itself.
        for (const waiter of batch) waiter.reject(error);
      }
      // Requests that came meanwhile take the lease that count brought, if any, before another count.
      batch = (this.waiting.get(key) ?? []).filter((waiter) => {
        const leased = this.fromLease(key);
        if (leased) waiter.resolve(leased);
        return !leased;
      });
    } while (batch.length > 0);
    this.waiting.delete(key);
  }

  /**
   * Decides `size` requests in one compare-and-set, retried on conflict; null when every try
   * lost. The same write gives back what the user's leases that ran out left unused, and,
   * when every request was admitted, counts the user's next lease.
   */
  private async countBatch(key: string, size: number): Promise<RateDecision[] | null> {
    const { bucket, clock, policy } = this.deps;
    let decisions: RateDecision[] = [];
    let lease: RateLease | null = null;
    let tries = 0;
    const returned = this.leases.returned(key, clock.now());
    const want = this.leases.want(key, clock.now()) + size;
    try {
      const stored = await bucket.upsert(
        key,
        (current) => {
          tries += 1;
          const nowMs = clock.now();
          const base = giveBack(current, returned);
          const decided = decideMany(base, nowMs, policy, size);
          decisions = decided.decisions;
          const leased = decisions.every((decision) => decision.admitted)
            ? takeLease(decided.next ?? base, nowMs, policy, want)
            : null;
          lease = leased?.lease ?? null;
          return leased?.next ?? decided.next ?? (base !== current ? (base ?? undefined) : undefined);
        },
        this.copies.startFrom(key, clock.now()),
        { writes: CAS_TRIES, pauseMs: casPauseMs },
      );
      if (stored?.written) this.leases.settled(key, returned, lease, clock.now());
      if (stored) this.copies.stored(key, stored, tries > 1, clock.now());
    } catch (error) {
      if (error instanceof RecordBusyError) return null;
      throw error;
    }
    return decisions;
  }

  private failOpen(error: unknown): void {
    rateLimitFailOpen.inc();
    const now = this.deps.clock.now();
    // A failed batch fails each of its requests: one warning for them all.
    if (now < this.bypassUntilMs) return;
    this.bypassUntilMs = now + BYPASS_MS;
    this.deps.logger.warn(
      { err: error, bypass_ms: BYPASS_MS },
      "rate-limit counters unreachable; requests pass uncounted",
    );
  }
}
