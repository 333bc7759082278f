import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import { Bucket, type KV } from "@nats-io/kv";
import { setTimeout as delay } from "node:timers/promises";
import { errors as natsErrors } from "@nats-io/transport-node";
import type { z } from "zod";
import { AppError } from "../errors/index.js";
import { checkKvKey } from "./names.js";
import { jetStreamApiErrors } from "./nats-metrics.js";
import { decodeJson, encodeJson } from "./rpc.js";

export interface Versioned<T> {
  value: T;
  /** The KV revision read: the compare-and-set token for the next update. */
  revision: number;
}

const CAS_RETRIES = 20;
const READ_TRIES = 6;
const READ_PAUSE_MS = 50;

/**
 * A read that may succeed if tried again: it timed out, the stream had no responder yet,
 * or the server it reached did not know the stream yet (a bucket created a moment ago on
 * a cluster; the bucket was opened, so it exists).
 */
function isPassingReadError(error: unknown): boolean {
  const cause = (error as { cause?: unknown })?.cause;
  return (
    error instanceof natsErrors.TimeoutError ||
    cause instanceof natsErrors.TimeoutError ||
    error instanceof natsErrors.NoRespondersError ||
    (error instanceof natsErrors.RequestError && error.isNoResponders()) ||
    (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)
  );
}

/** The server refused a compare-and-set because the key moved on (or already exists). */
function isWrongSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence || error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/**
 * A KV bucket of JSON records checked against one schema. Every change is a
 * compare-and-set on the revision read (the project's actor rule). Every key is checked
 * against the shape of its bucket's keys (`BUCKET_KEYS`) before it reaches NATS: a
 * malformed id is `request.invalid`, never a wildcard or a NATS error.
 */
export class JsonBucket<S extends z.ZodType> {
  private readonly bucketName: string;

  constructor(
    readonly kv: KV,
    readonly schema: S,
  ) {
    this.bucketName = kv instanceof Bucket ? kv.bucket : "";
  }

  private checked(key: string): string {
    return checkKvKey(this.bucketName, key);
  }

  async get(key: string): Promise<Versioned<z.infer<S>> | null> {
    const entry = await this.readEntry(this.checked(key));
    if (!entry || entry.operation !== "PUT") return null;
    return { value: this.schema.parse(decodeJson(entry.value)), revision: entry.revision };
  }

  /**
   * A read is safe to repeat: one that failed in a way that may pass (isPassingReadError) is tried again
   * after a short pause. A stream created a moment ago may leave API requests unanswered
   * for a while (nats-server#6421), and on a cluster its direct-get responders appear
   * only once its replicas have caught up; both last longer while many buckets are
   * created at once, as on every service's first start.
   */
  private async readEntry(key: string) {
    for (let tryNumber = 1; ; tryNumber += 1) {
      try {
        return await this.kv.get(key);
      } catch (error) {
        if (!isPassingReadError(error) || tryNumber >= READ_TRIES) throw apiFailure("get", error);
        await delay(READ_PAUSE_MS * tryNumber);
      }
    }
  }

  /** Creates the key; answers `resource.already_exists` when it is there. */
  async create(key: string, value: z.infer<S>): Promise<number> {
    const [checked, bytes] = [this.checked(key), encodeJson(this.schema.parse(value))];
    try {
      return await this.kv.create(checked, bytes);
    } catch (error) {
      if (isWrongSequence(error)) throw new AppError("resource.already_exists", "A record with this identity already exists.");
      throw apiFailure("create", error);
    }
  }

  async put(key: string, value: z.infer<S>): Promise<number> {
    const [checked, bytes] = [this.checked(key), encodeJson(this.schema.parse(value))];
    try {
      return await this.kv.put(checked, bytes);
    } catch (error) {
      throw apiFailure("put", error);
    }
  }

  /** Writes `value` only if the key is still at `revision`; false when another writer won. */
  async update(key: string, value: z.infer<S>, revision: number): Promise<number | null> {
    const [checked, bytes] = [this.checked(key), encodeJson(this.schema.parse(value))];
    try {
      return await this.kv.update(checked, bytes, revision);
    } catch (error) {
      if (isWrongSequence(error)) return null;
      throw apiFailure("update", error);
    }
  }

  /**
   * Applies `change` to the record and writes the result back by compare-and-set: a write
   * another writer beat is read again and `change` applied afresh, at most CAS_RETRIES
   * writes in all. `change` returns the new value, or `undefined` to leave the record as it
   * is; it may be async (the record may move meanwhile: the write then loses and it runs again).
   * Returns the record as stored after the call, or null when the key is absent.
   *
   * `known`, an entry the caller holds (just read, or a copy kept current by a watch), is
   * where the first try starts instead of a read. `change` decides on it as on a read:
   * a copy that may lag is worth passing only where "nothing to change" on it is an answer
   * the caller can live with.
   */
  async mutate(
    key: string,
    change: (current: z.infer<S>) => z.infer<S> | undefined | Promise<z.infer<S> | undefined>,
    known?: Versioned<z.infer<S>>,
  ): Promise<Versioned<z.infer<S>> | null> {
    return this.upsert(key, (current) => (current === null ? undefined : change(current)), known);
  }

  /**
   * Like `mutate`, but `change` also sees an absent key (`null`) and may create it; a
   * creation race lost to another writer is retried like a conflict. Returns the record as
   * stored after the call and whether this call wrote it, or null when the key is absent
   * and stays so.
   */
  async upsert(
    key: string,
    change: (current: z.infer<S> | null) => z.infer<S> | undefined | Promise<z.infer<S> | undefined>,
    known?: Versioned<z.infer<S>>,
  ): Promise<(Versioned<z.infer<S>> & { written: boolean }) | null> {
    let current = known ?? (await this.get(key));
    for (let write = 1; ; write += 1) {
      const next = await change(current?.value ?? null);
      if (next === undefined) return current ? { ...current, written: false } : null;
      const revision = current ? await this.update(key, next, current.revision) : await this.createUnlessTaken(key, next);
      if (revision !== null) return { value: next, revision, written: true };
      if (write >= CAS_RETRIES) throw new AppError("service.unavailable", "The record is too busy to change right now; try again.", { retryAfterSeconds: 1 });
      current = await this.get(key);
    }
  }

  private async createUnlessTaken(key: string, value: z.infer<S>): Promise<number | null> {
    try {
      return await this.create(key, value);
    } catch (error) {
      if (error instanceof AppError && error.code === "resource.already_exists") return null;
      throw error;
    }
  }

  /**
   * The keys matching a filter (`>` for all; `app.biz.*` for one tenant's), read from the
   * stream's per-subject counts. Not `kv.keys()`: with nats-server 2.9 its consumer can wait
   * forever when a key changes during the listing. A deleted key keeps its marker, so
   * callers skip keys whose read finds nothing.
   */
  async keys(filter = ">"): Promise<string[]> {
    if (!(this.kv instanceof Bucket)) throw new Error("JsonBucket.keys needs a KV bucket opened by Kvm");
    const prefix = `$KV.${this.kv.bucket}.`;
    const info = await this.kv.jsm.streams.info(this.kv.stream, { subjects_filter: `${prefix}${filter}` }).catch((error: unknown) => {
      throw apiFailure("keys", error);
    });
    return Object.keys(info.state.subjects ?? {}).map((subject) => subject.slice(prefix.length));
  }

  /**
   * Removes the record by compare-and-set on the revision read, when `check` lets it
   * (`check` throws to refuse; it sees the record afresh after every lost write, at most
   * CAS_RETRIES writes in all). The purge leaves a marker the bucket's watches see, which
   * the server removes after `markerTtlSeconds` (the bucket's stream must allow message
   * TTLs). Returns the record removed, or null when the key was absent.
   */
  async removeIf(key: string, check: (current: z.infer<S>) => void, markerTtlSeconds: number, known?: Versioned<z.infer<S>>): Promise<z.infer<S> | null> {
    const checked = this.checked(key);
    let current = known ?? (await this.get(key));
    for (let write = 1; current !== null; write += 1) {
      check(current.value);
      try {
        await this.kv.purge(checked, { previousSeq: current.revision, ttl: `${markerTtlSeconds}s` });
        return current.value;
      } catch (error) {
        if (!isWrongSequence(error)) throw apiFailure("purge", error);
      }
      if (write >= CAS_RETRIES) throw new AppError("service.unavailable", "The record is too busy to remove right now; try again.", { retryAfterSeconds: 1 });
      current = await this.get(key);
    }
    return null;
  }

  /**
   * Removes the key and its history without leaving a marker, so the bucket's stream
   * shrinks at once. Only for buckets nobody watches: a watch never learns of an erase.
   */
  async erase(key: string): Promise<void> {
    if (!(this.kv instanceof Bucket)) throw new Error("JsonBucket.erase needs a KV bucket opened by Kvm");
    const subject = `$KV.${this.kv.bucket}.${this.checked(key)}`;
    try {
      await this.kv.jsm.streams.purge(this.kv.stream, { filter: subject });
    } catch (error) {
      throw apiFailure("erase", error);
    }
  }

  async delete(key: string): Promise<void> {
    const checked = this.checked(key);
    try {
      await this.kv.delete(checked);
    } catch (error) {
      throw apiFailure("delete", error);
    }
  }
}

/** Counts a failed JetStream call (`cjs_jetstream_api_errors_total`) and hands its error on. */
function apiFailure(operation: string, error: unknown): unknown {
  jetStreamApiErrors.inc({ operation });
  return error;
}
