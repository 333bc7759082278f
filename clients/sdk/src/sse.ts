import { createParser } from "eventsource-parser";

/** One Server-Sent Event as the stream framed it. */
export interface ServerSentEvent {
  /** The `id` field; undefined when the event had none. */
  id: string | undefined;
  /** The `event` field; `message` when absent. */
  event: string;
  data: string;
}

/**
 * Frames a byte stream into events by the SSE rules (eventsource-parser: CRLF, LF or CR line
 * ends, comments skipped, `data` lines joined with LF). An event the stream cut before its
 * blank line is not delivered.
 */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder();
  const framed: ServerSentEvent[] = [];
  const parser = createParser({
    onEvent: (event) => framed.push({ id: event.id, event: event.event ?? "message", data: event.data }),
  });
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      parser.feed(done ? decoder.decode() : decoder.decode(value, { stream: true }));
      yield* framed.splice(0);
      if (done) return;
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}
