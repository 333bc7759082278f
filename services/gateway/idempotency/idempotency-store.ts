import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { z } from "zod";
import { AppError } from "../../../shared/errors/index.js";
import {
  BUCKETS,
  ensureBuckets,
  JsonBucket,
  type TopologyOptions,
  type Versioned,
} from "../../../shared/nats/index.js";

/** What the first request with one Idempotency-Key asked, and (a retry, once done) answered. */
export const IdempotencyRecord = z.looseObject({
  /** The operation's path: the same key on another operation is a reuse. */
  route: z.string(),
  /** `requestFingerprint` of the first request. */
  fingerprint: z.string(),
  /** A random token of the request that holds the key: only it stores the answer or gives the key back. */
  holder: z.string(),
  /** When the holder began (ms): a retry's claim older than the takeover time is taken over. */
  claimed_at: z.number(),
  /** Submit: the id the job is made under, chosen before any job exists, so every repeat makes or finds that one job. */
  job_id: z.string().nullable(),
  /** Retry: the first answer's payload, once given; null while the holder is at work. */
  answer: z.unknown().nullable(),
  /**
   * The holder's request was refused (4xx) and gave the key back. The record stays, with its
   * `job_id`: a repeat that stopped waiting may have made that job meanwhile, and the next
   * request with the same body must find it, not make a second. Another body starts afresh.
   */
  released: z.boolean().optional(),
});
export type IdempotencyRecord = z.infer<typeof IdempotencyRecord>;

/** A key whose record vanishes (given back, or expired) between create and read is claimed again, this many times at most. */
const CLAIM_TRIES = 3;
/** How long one KV operation may take: a stalled store fails the request instead of holding it. */
const KV_TIMEOUT_MS = 2000;

export interface Claim {
  record: Versioned<IdempotencyRecord>;
  /** Whether this request made the record (it is the first with the key). */
  first: boolean;
}

/**
 * The Idempotency-Key records of every gateway replica, in `cjs_idempotency` (24 h age
 * limit) under `<app>.<business>.<key hash>`. Read and written only for requests that
 * carry the header.
 */
export class IdempotencyStore {
  constructor(private readonly bucket: JsonBucket<typeof IdempotencyRecord>) {}

  static async open(nc: NatsConnection, topology: TopologyOptions): Promise<IdempotencyStore> {
    await ensureBuckets(nc, [BUCKETS.idempotency], topology);
    const kv = await new Kvm(jetstream(nc, { timeout: KV_TIMEOUT_MS })).open(BUCKETS.idempotency);
    return new IdempotencyStore(new JsonBucket(kv, IdempotencyRecord));
  }

  /**
   * Makes `fresh` the key's record, or reads the one there. A record of another operation or
   * body is 422 `idempotency.key_reused`.
   */
  async claim(key: string, fresh: IdempotencyRecord): Promise<Claim> {
    for (let tryNumber = 1; ; tryNumber += 1) {
      try {
        return { record: { value: fresh, revision: await this.bucket.create(key, fresh) }, first: true };
      } catch (error) {
        if (!(error instanceof AppError && error.code === "resource.already_exists")) throw error;
      }
      const found = await this.bucket.get(key);
      if (found) {
        // A key given back is the next request's to reclaim, whatever its body.
        if (found.value.released === true) return { record: found, first: false };
        if (found.value.route !== fresh.route || found.value.fingerprint !== fresh.fingerprint) {
          throw new AppError(
            "idempotency.key_reused",
            "This Idempotency-Key was used for another request in the last 24 h; use a new key for a new request.",
          );
        }
        return { record: found, first: false };
      }
      if (tryNumber >= CLAIM_TRIES)
        throw new AppError("service.unavailable", "The Idempotency-Key record is changing too fast; try again.", {
          retryAfterSeconds: 1,
        });
    }
  }

  /** Hands a stale claim to `holder` by compare-and-set; null when another request changed the record first. */
  async takeOver(
    key: string,
    stale: Versioned<IdempotencyRecord>,
    holder: string,
    nowMs: number,
  ): Promise<Versioned<IdempotencyRecord> | null> {
    const value = { ...stale.value, holder, claimed_at: nowMs };
    const revision = await this.bucket.update(key, value, stale.revision);
    return revision === null ? null : { value, revision };
  }

  /** Stores the holder's answer for the repeats; kept as it is if another request took the key over. */
  async complete(key: string, holder: string, answer: unknown): Promise<void> {
    await this.bucket.mutate(key, (record) => (record.holder === holder ? { ...record, answer } : undefined));
  }

  /**
   * Marks the holder's claim as given up with its outcome unknown (a 5xx): the record stays,
   * and a repeat acts on it at once instead of waiting for an answer that will not come.
   */
  async abandon(key: string, holder: string): Promise<void> {
    await this.bucket.mutate(key, (record) =>
      record.holder === holder && record.answer === null ? { ...record, claimed_at: 0 } : undefined,
    );
  }

  /**
   * Gives the key back (the holder's request was refused): the next request with it
   * reclaims it (`reclaim`). `claimed_at` 0 lets a gateway of an older version, which
   * knows no `released`, treat it as a claim given up and submit under its `job_id`.
   */
  async release(key: string, holder: string): Promise<void> {
    await this.bucket.mutate(key, (record) =>
      record.holder === holder && record.answer === null ? { ...record, released: true, claimed_at: 0 } : undefined,
    );
  }

  /**
   * Makes a request the holder of a key given back, by compare-and-set: with the same
   * operation and body it keeps the record's `job_id` (a repeat may have made that job);
   * with another it starts afresh. Null when another request changed the record first.
   */
  async reclaim(
    key: string,
    released: Versioned<IdempotencyRecord>,
    fresh: IdempotencyRecord,
  ): Promise<Versioned<IdempotencyRecord> | null> {
    const same = released.value.route === fresh.route && released.value.fingerprint === fresh.fingerprint;
    const { released: _given, ...kept } = released.value;
    const value: IdempotencyRecord = {
      ...kept,
      ...fresh,
      job_id: same ? released.value.job_id : fresh.job_id,
      answer: null,
    };
    const revision = await this.bucket.update(key, value, released.revision);
    return revision === null ? null : { value, revision };
  }
}
