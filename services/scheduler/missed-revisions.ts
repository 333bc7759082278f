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
 * The revisions `from`..`to` (inclusive) that the bucket's stream still holds. A bucket
 * keeps one revision per key, so a revision still there is its key's latest value: one a
 * watch skipped without a later revision of the key to make up for it. The others were
 * replaced (a watch may pass over a replaced revision; that loses nothing). Read from the
 * stream's leader (the buckets have no direct reads), one sequence at a time: gaps are a
 * revision or two. A read that fails is tried again a few times, then the error is thrown.
 */
export async function readStillStored(kv: KV, from: number, to: number): Promise<StoredRevision[]> {
  if (!(kv instanceof Bucket)) throw new Error("readStillStored needs a KV bucket opened by Kvm");
  const prefix = `$KV.${kv.bucket}.`;
  const found: StoredRevision[] = [];
  for (let seq = from; seq <= to; seq += 1) {
    const message = await withRetries(() => kv.jsm.streams.getMessage(kv.stream, { seq }));
    if (!message || !message.subject.startsWith(prefix)) continue;
    const operation = message.header?.get("KV-Operation");
    found.push({
      key: message.subject.slice(prefix.length),
      revision: message.seq,
      operation: operation === "DEL" || operation === "PURGE" ? operation : "PUT",
      value: message.data,
    });
  }
  return found;
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
