import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { ObjectInfo } from "@nats-io/obj";

/** Bytes `start` to `end`, both included. */
export interface ByteSpan {
  start: number;
  end: number;
}

/** Chunks asked for at once: the most a slow reader can leave buffered (about 1 MiB of 128 KiB chunks). */
const CHUNKS_PER_FETCH = 8;
const FETCH_EXPIRES_MS = 30_000;

/**
 * Reads an object's chunks with an ordered consumer, a few at a time and only when the
 * returned stream wants more, so a slow client holds the gateway's memory to one batch.
 * (`ObjectStore.get` pushes every chunk as fast as NATS sends it, whatever the reader.)
 * The chunks live in `OBJ_<bucket>` under `$O.<bucket>.C.<nuid>` (NATS ADR-20). A span
 * skips the bytes before it and stops after it; a whole read checks the object's digest.
 */
export function readObject(js: JetStreamClient, bucket: string, info: ObjectInfo, span?: ByteSpan): Readable {
  const wanted = span ?? { start: 0, end: info.size - 1 };
  async function* chunks(): AsyncGenerator<Buffer> {
    if (info.size === 0 || wanted.end < wanted.start) return;
    const consumer = await js.consumers.get(`OBJ_${bucket}`, { filter_subjects: `$O.${bucket}.C.${info.nuid}` });
    const hash = span ? null : createHash("sha256");
    let offset = 0;
    let received = 0;
    try {
      while (received < info.chunks && offset <= wanted.end) {
        const batch = await consumer.fetch({
          max_messages: Math.min(CHUNKS_PER_FETCH, info.chunks - received),
          expires: FETCH_EXPIRES_MS,
        });
        const before = received;
        for await (const message of batch) {
          received += 1;
          const data = Buffer.from(message.data.buffer, message.data.byteOffset, message.data.byteLength);
          const chunkStart = offset;
          offset += data.length;
          hash?.update(data);
          const from = Math.max(wanted.start - chunkStart, 0);
          const to = Math.min(wanted.end + 1 - chunkStart, data.length);
          if (to > from) yield data.subarray(from, to);
        }
        if (received === before) throw new Error(`object ${info.name}: no chunk arrived within ${FETCH_EXPIRES_MS} ms`);
      }
      if (!span && offset !== info.size) throw new Error(`object ${info.name}: read ${offset} bytes of ${info.size}`);
      if (hash && `SHA-256=${hash.digest("base64url")}` !== info.digest.replace(/=+$/, "")) {
        throw new Error(`object ${info.name}: the bytes read do not match the stored digest`);
      }
    } finally {
      await consumer.delete().catch(() => undefined);
    }
  }
  return Readable.from(chunks(), { objectMode: false, highWaterMark: 64 * 1024 });
}
