import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { AppError, isAppError } from "../../../shared/errors/index.js";
import { BUCKETS, ensureBuckets, JsonBucket, kvKey, RecordBusyError } from "../../../shared/nats/index.js";
import type { Clock } from "../../../shared/runtime/index.js";
import type { Caller } from "../identity/authenticator.js";
import { CounterCopies } from "./counter-copies.js";
import { KeyedPacer } from "./pacer.js";
import { rateLimited, rateLimitFailOpen, rateLimitPaced } from "./rate-limit-metrics.js";
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
  resolve(decision: RateDecision | null): void;
  reject(error: unknown): void;
}

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
    let decision: RateDecision | null;
    try {
      decision = await this.count(key);
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
      if (await this.pacer.take(key, 1)) rateLimitPaced.inc();
      return;
    }
    const { window, limit } = decision.binding;
    if (this.refused.size >= REFUSALS_REMEMBERED) this.refused.clear();
    this.refused.set(key, { untilMs: clock.now() + decision.retryAfterSeconds * 1000, window, limit });
    throw this.refusal(window, limit, decision.retryAfterSeconds);
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
   * The caller's window closest to exhaustion, read and not counted (a dry run shows it).
   * Null when the caller's requests are not counted or the counters cannot be read now.
   */
  async headroom(caller: Caller): Promise<WindowStatus | null> {
    if (!RateLimiter.counts(caller) || this.deps.clock.now() < this.bypassUntilMs) return null;
    try {
      const stored = await this.deps.bucket.get(kvKey(caller.app_id, caller.user_id));
      return headroomOf(stored?.value ?? null, this.deps.clock.now(), this.deps.policy);
    } catch {
      return null;
    }
  }

  /** The decision for one request, counted in the user's next batch; null when the batch lost every compare-and-set. */
  private count(key: string): Promise<RateDecision | null> {
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

  /** Counts the key's waiting requests, one batch after another, until none is left. */
  private async serveBatches(key: string): Promise<void> {
    for (let batch = this.waiting.get(key) ?? []; batch.length > 0; batch = this.waiting.get(key) ?? []) {
      this.waiting.set(key, []);
      try {
        const decisions = await this.countBatch(key, batch.length);
        batch.forEach((waiter, index) => waiter.resolve(decisions?.[index] ?? null));
      } catch (error) {
        for (const waiter of batch) waiter.reject(error);
      }
    }
    this.waiting.delete(key);
  }

  /** Decides `size` requests in one compare-and-set, retried on conflict; null when every try lost. */
  private async countBatch(key: string, size: number): Promise<RateDecision[] | null> {
    const { bucket, clock, policy } = this.deps;
    let decisions: RateDecision[] = [];
    let tries = 0;
    try {
      const stored = await bucket.upsert(
        key,
        (current) => {
          tries += 1;
          const decided = decideMany(current, clock.now(), policy, size);
          decisions = decided.decisions;
          return decided.next ?? undefined;
        },
        this.copies.startFrom(key, clock.now()),
        { writes: CAS_TRIES, pauseMs: casPauseMs },
      );
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
