import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { AppError, isAppError } from "../../../shared/errors/index.js";
import { BUCKETS, ensureBuckets, JsonBucket, kvKey } from "../../../shared/nats/index.js";
import type { Clock } from "../../../shared/runtime/index.js";
import type { Caller } from "../identity/authenticator.js";
import { rateLimited, rateLimitFailOpen } from "./rate-limit-metrics.js";
import { decide, rateLimitHeaders, RateLimitRecord, type RateDecision, type RateLimitPolicy } from "./windows.js";

/**
 * Compare-and-set tries per request. A conflict means another request of the same user was
 * admitted in between, so only a user with this many requests in flight at once runs out.
 */
const CAS_TRIES = 50;
/** At most one warning per replica this often while the counters are unreachable. */
const WARN_EVERY_MS = 10_000;

const PER = { minute: "a minute", hour: "an hour" } as const;

/** Where the RateLimit headers go (a fastify reply). */
export interface HeaderSink {
  header(name: string, value: string): unknown;
}

/**
 * Per-user request limits shared by every gateway replica: one counter per application
 * and user in `cjs_rate_limits`, changed by compare-and-set, so two replicas together
 * admit no more than the limit. Only user credentials (a bearer JWT or a user's API key)
 * are counted; node keys are not (see docs/api.md, "Rate limits").
 */
export class RateLimiter {
  private lastWarningMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly deps: {
      bucket: JsonBucket<typeof RateLimitRecord>;
      clock: Clock;
      logger: Logger;
      policy: RateLimitPolicy;
    },
  ) {}

  /** Opens (or creates) the shared counter bucket. */
  static async open(nc: NatsConnection, options: { replicas: number; policy: RateLimitPolicy; clock: Clock; logger: Logger }): Promise<RateLimiter> {
    const kv = await ensureBuckets(nc, [BUCKETS.rateLimits], { replicas: options.replicas });
    return new RateLimiter({ bucket: new JsonBucket(kv[BUCKETS.rateLimits], RateLimitRecord), clock: options.clock, logger: options.logger, policy: options.policy });
  }

  /** Whether requests of this caller count against a user's budget. */
  static counts(caller: Caller): boolean {
    return caller.credential.kind === "jwt" || caller.credential.kind === "api_key";
  }

  /**
   * Counts one request of `caller` and writes the RateLimit headers on `reply`. Throws
   * `rate.limited` (with its `Retry-After`) when a window is exhausted. If the counters
   * cannot be reached, the request is let through uncounted (fail-open), with a warning
   * and `cjs_rate_limit_fail_open_total`.
   */
  async admit(caller: Caller, reply: HeaderSink): Promise<void> {
    if (!RateLimiter.counts(caller)) return;
    const { policy } = this.deps;
    let decision: RateDecision | null;
    try {
      decision = await this.count(kvKey(caller.app_id, caller.user_id));
    } catch (error) {
      if (isAppError(error)) throw error;
      this.failOpen(error);
      return;
    }
    if (decision === null) {
      rateLimited.inc({ window: "contention" });
      throw new AppError("rate.limited", "Too many requests at once for this user; retry in a second.", { retryAfterSeconds: 1 });
    }
    for (const [name, value] of Object.entries(rateLimitHeaders(policy, decision.binding))) reply.header(name, value);
    if (decision.admitted) return;
    const { window, limit } = decision.binding;
    rateLimited.inc({ window });
    throw new AppError(
      "rate.limited",
      `Rate limit reached: ${limit} requests ${PER[window]} for this user; retry in ${decision.retryAfterSeconds} s.`,
      { retryAfterSeconds: decision.retryAfterSeconds, details: { window, limit } },
    );
  }

  /** The decision for one request, written when admitted; null when every try lost its compare-and-set. */
  private async count(key: string): Promise<RateDecision | null> {
    const { bucket, clock, policy } = this.deps;
    for (let tryNumber = 0; tryNumber < CAS_TRIES; tryNumber += 1) {
      const stored = await bucket.get(key);
      const decision = decide(stored?.value ?? null, clock.now(), policy);
      if (!decision.admitted) return decision;
      const written = stored ? await bucket.update(key, decision.next, stored.revision) : await this.create(key, decision.next);
      if (written !== null) return decision;
    }
    return null;
  }

  private async create(key: string, record: RateLimitRecord): Promise<number | null> {
    try {
      return await this.deps.bucket.create(key, record);
    } catch (error) {
      if (isAppError(error) && error.code === "resource.already_exists") return null;
      throw error;
    }
  }

  private failOpen(error: unknown): void {
    rateLimitFailOpen.inc();
    const now = this.deps.clock.now();
    if (now - this.lastWarningMs < WARN_EVERY_MS) return;
    this.lastWarningMs = now;
    this.deps.logger.warn({ err: error }, "rate-limit counters unreachable; requests pass uncounted");
  }
}
