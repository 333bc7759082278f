import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import { Bucket, type KV } from "@nats-io/kv";
import { setTimeout as delay } from "node:timers/promises";
import { errors as natsErrors } from "@nats-io/transport-node";
import type { z } from "zod";
import { AppError } from "../errors/index.js";
import { checkKvKey } from "./names.js";
import { casRefusals, jetStreamApiErrors } from "./nats-metrics.js";
import { decodeJson, encodeJson } from "./rpc.js";
import { foundNoResponder } from "./unavailable.js";

export interface Versioned<T> {
  value: T;
  /** The KV revision read: the compare-and-set token for the next update. */
  revision: number;
}

const CAS_RETRIES = 20;

/** Told of every value this process wrote (created, updated or put), with the revision and the bytes stored. */
export type WriteObserver<T> = (key: string, revision: number, value: T, bytes: Uint8Array) => void;

/** How hard `mutate`/`upsert` try before giving up on a busy record. */
export interface CasOptions {
  /** Writes tried in all (default 20). */
  writes?: number;
  /** A pause before the next try after a lost write (`write` counts from 1): spreads out writers that collide. */
  pauseMs?: (write: number) => number;
}

/** Every compare-and-set of `mutate`/`upsert` lost to another writer: the record is too busy right now. */
export class RecordBusyError extends AppError {
  constructor() {
    super("service.unavailable", "The record is too busy to change right now; try again.", { retryAfterSeconds: 1 });
  }
}
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
    foundNoResponder(error) ||
    (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)
  );
}

/** The server refused a compare-and-set because the key moved on (or already exists). */
function isWrongSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
      error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/**
 * A KV bucket of JSON records checked against one schema. Every change is a
 * compare-and-set on the revision read (the project's actor rule). Every key is checked
 * against the shape of its bucket's keys (`BUCKET_KEYS`) before it reaches NATS: a
 * malformed id is `request.invalid`, never a wildcard or a NATS error. A record is checked
 * when it is read (another version of the service may have written it), not when this
 * service writes a value its types already describe.
 */
export class JsonBucket<S extends z.ZodType> {
  /** The bucket's name ("" for a KV handle not opened by Kvm). */
  readonly bucketName: string;
  /** Keeps a picture current from the writes themselves, before the bucket's watch brings them back. */
  onWritten: WriteObserver<z.infer<S>> | undefined;

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
    const [checked, bytes] = [this.checked(key), encodeJson(value)];
    let revision: number;
    try {
      revision = await this.kv.create(checked, bytes);
    } catch (error) {
      if (isWrongSequence(error))
        throw new AppError("resource.already_exists", "A record with this identity already exists.");
      throw apiFailure("create", error);
    }
    this.onWritten?.(key, revision, value, bytes);
    return revision;
  }

  async put(key: string, value: z.infer<S>): Promise<number> {
    const [checked, bytes] = [this.checked(key), encodeJson(value)];
    let revision: number;
    try {
      revision = await this.kv.put(checked, bytes);
    } catch (error) {
      throw apiFailure("put", error);
    }
    this.onWritten?.(key, revision, value, bytes);
    return revision;
  }

  /** Writes `value` only if the key is still at `revision`; false when another writer won. */
  async update(key: string, value: z.infer<S>, revision: number): Promise<number | null> {
    const [checked, bytes] = [this.checked(key), encodeJson(value)];
    let written: number;
    try {
      written = await this.kv.update(checked, bytes, revision);
    } catch (error) {
      if (isWrongSequence(error)) {
        casRefusals.inc({ bucket: this.bucketName });
        return null;
      }
      throw apiFailure("update", error);
    }
    this.onWritten?.(key, written, value, bytes);
    return written;
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
   * the caller can live with. A change that throws ends the call with its error.
   */
  async mutate(
    key: string,
    change: (current: z.infer<S>) => z.infer<S> | undefined | Promise<z.infer<S> | undefined>,
    known?: Versioned<z.infer<S>>,
    options?: CasOptions,
  ): Promise<Versioned<z.infer<S>> | null> {
    return this.upsert(key, (current) => (current === null ? undefined : change(current)), known, options);
  }

  /**
   * Like `mutate`, but `change` also sees an absent key (`null`) and may create it; a
   * creation race lost to another writer is retried like a conflict. Returns the record as
   * stored after the call and whether this call wrote it, or null when the key is absent
   * and stays so. Throws RecordBusyError when every write lost.
   */
  async upsert(
    key: string,
    change: (current: z.infer<S> | null) => z.infer<S> | undefined | Promise<z.infer<S> | undefined>,
    known?: Versioned<z.infer<S>>,
    options: CasOptions = {},
  ): Promise<(Versioned<z.infer<S>> & { written: boolean }) | null> {
    const writes = options.writes ?? CAS_RETRIES;
    let current = known ?? (await this.get(key));
    for (let write = 1; ; write += 1) {
      const next = await change(current?.value ?? null);
      if (next === undefined) return current ? { ...current, written: false } : null;
      const revision = current
        ? await this.update(key, next, current.revision)
        : await this.createUnlessTaken(key, next);
      if (revision !== null) return { value: next, revision, written: true };
      if (write >= writes) throw new RecordBusyError();
      const pause = options.pauseMs?.(write) ?? 0;
      if (pause > 0) await delay(pause);
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
    const info = await this.kv.jsm.streams
      .info(this.kv.stream, { subjects_filter: `${prefix}${filter}` })
      .catch((error: unknown) => {
        throw apiFailure("keys", error);
      });
    return Object.keys(info.state.subjects ?? {}).map((subject) => subject.slice(prefix.length));
  }

  /**
   * Removes the record by compare-and-set on the revision read, when `allow` lets it go
   * (false keeps it; `allow` may also throw to refuse). A write that beat the removal is
   * read again and judged afresh, at most `options.writes` (CAS_RETRIES) tries; then
   * RecordBusyError. The removal leaves a marker that the bucket's watches see: a delete
   * marker, or with `markerTtlSeconds` a purge (the key's history goes too) whose marker
   * the server removes after that time (the bucket's stream must allow message TTLs).
   * Returns the record removed, or null when the key is absent or kept.
   */
  async removeIf(
    key: string,
    allow: (current: z.infer<S>) => boolean,
    options: CasOptions & { markerTtlSeconds?: number; known?: Versioned<z.infer<S>> } = {},
  ): Promise<Versioned<z.infer<S>> | null> {
    const checked = this.checked(key);
    const writes = options.writes ?? CAS_RETRIES;
    let current = options.known ?? (await this.get(key));
    for (let write = 1; current !== null && allow(current.value); write += 1) {
      const operation = options.markerTtlSeconds === undefined ? "delete" : "purge";
      try {
        if (options.markerTtlSeconds === undefined) await this.kv.delete(checked, { previousSeq: current.revision });
        else await this.kv.purge(checked, { previousSeq: current.revision, ttl: `${options.markerTtlSeconds}s` });
        return current;
      } catch (error) {
        if (!isWrongSequence(error)) throw apiFailure(operation, error);
      }
      if (write >= writes) throw new RecordBusyError();
      const pause = options.pauseMs?.(write) ?? 0;
      if (pause > 0) await delay(pause);
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
