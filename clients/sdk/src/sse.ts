/** One Server-Sent Event as the stream framed it. */
export interface ServerSentEvent {
  /** The `id` field; undefined when the event had none. */
  id: string | undefined;
  /** The `event` field; `message` when absent. */
  event: string;
  data: string;
}

/**
 * Frames a byte stream into events by the SSE rules: lines end with CRLF, LF or CR; a
 * blank line ends an event; `:` starts a comment (keep-alives); `data` lines join with LF.
 */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let fields: { id: string | undefined; event: string; data: string[] } = { id: undefined, event: "message", data: [] };
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let match: RegExpExecArray | null;
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      while ((match = /\r\n|\n|\r(?!$)/.exec(buffer)) !== null) {
        const line = buffer.slice(0, match.index);
        buffer = buffer.slice(match.index + match[0].length);
        if (line === "") {
          if (fields.data.length > 0) yield { id: fields.id, event: fields.event, data: fields.data.join("\n") };
          fields = { id: undefined, event: "message", data: [] };
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const name = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (name === "data") fields.data.push(value);
        else if (name === "event") fields.event = value;
        else if (name === "id") fields.id = value;
      }
      if (done) return;
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}
