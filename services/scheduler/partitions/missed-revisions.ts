import { Bucket, type KV } from "@nats-io/kv";
import { setTimeout as delay } from "node:timers/promises";

/** One revision read back from the bucket's stream by its sequence. */
export interface StoredRevision {
  key: string;
  revision: number;
  operation: "PUT" | "DEL" | "PURGE";
  value: Uint8Array;
}

const READ_TRIES = 4;
const READ_PAUSE_MS = 100;

/**
 * The revisions `from`..`to` (inclusive) of keys under `keyFilter` that the bucket's
 * stream still holds. A bucket
 * keeps one revision per key, so a revision still there is its key's latest value: one a
 * watch skipped without a later revision of the key to make up for it. The others were
 * replaced (a watch may pass over a replaced revision; that loses nothing). Each read asks
 * the stream's leader (the buckets have no direct reads) for the first message at or after
 * a sequence, so a gap of replaced revisions, however wide, costs one read, and each
 * revision still stored one more. A read that fails is tried again a few times, then the
 * error is thrown.
 */
export async function readStillStored(kv: KV, from: number, to: number, keyFilter = ">"): Promise<StoredRevision[]> {
  if (!(kv instanceof Bucket)) throw new Error("readStillStored needs a KV bucket opened by Kvm");
  const prefix = `$KV.${kv.bucket}.`;
  const found: StoredRevision[] = [];
  for (let seq = from; seq <= to; ) {
    // The server's message get takes `next_by_subj` with `seq`; the client's type names only the plain forms.
    const query = { seq, next_by_subj: `${prefix}${keyFilter}` } as unknown as { seq: number };
    const message = await withRetries(() => kv.jsm.streams.getMessage(kv.stream, query));
    if (!message || message.seq > to) break;
    const operation = message.header?.get("KV-Operation");
    found.push({
      key: message.subject.slice(prefix.length),
      revision: message.seq,
      operation: operation === "DEL" || operation === "PURGE" ? operation : "PUT",
      value: message.data,
    });
    seq = message.seq + 1;
  }
  return found;
}

/**
 * The last revision still stored of keys under `keyFilter`, or 0 when there is none. The
 * stream's last sequence may be a message gone since: a deleted job's marker that expired.
 */
export async function lastStoredRevision(kv: KV, keyFilter = ">"): Promise<number> {
  if (!(kv instanceof Bucket)) throw new Error("lastStoredRevision needs a KV bucket opened by Kvm");
  // As above: the server's message get takes a wildcard `last_by_subj`; the client's type does not say so.
  const query = { last_by_subj: `$KV.${kv.bucket}.${keyFilter}` } as unknown as { seq: number };
  const message = await withRetries(() => kv.jsm.streams.getMessage(kv.stream, query));
  return message?.seq ?? 0;
}

async function withRetries<T>(read: () => Promise<T>): Promise<T> {
  for (let tryNumber = 1; ; tryNumber += 1) {
    try {
      return await read();
    } catch (error) {
      if (tryNumber >= READ_TRIES) throw error;
      await delay(READ_PAUSE_MS * tryNumber);
    }
  }
}
