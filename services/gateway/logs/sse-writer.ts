import type { ServerResponse } from "node:http";

/**
 * Writes Server-Sent Events on a raw response. Each frame is one `write`, so frames never
 * interleave; a full socket buffer makes the writer wait (the log tail then stops reading
 * the stream) instead of piling lines up in memory.
 */
export class SseWriter {
  private ended = false;

  constructor(private readonly response: ServerResponse) {
    response.once("close", () => {
      this.ended = true;
    });
  }

  /** One event; `data` is JSON, so it never contains a line break. */
  event(name: string, data: unknown, id?: number): Promise<void> {
    const idLine = id === undefined ? "" : `id: ${id}\n`;
    return this.write(`${idLine}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** A comment line, ignored by clients: keeps proxies and idle timers from closing the stream. */
  comment(text: string): Promise<void> {
    return this.write(`: ${text}\n\n`);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.response.end();
  }

  private write(frame: string): Promise<void> {
    if (this.ended || this.response.write(frame)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.response.off("drain", done);
        this.response.off("close", done);
        resolve();
      };
      this.response.on("drain", done);
      this.response.on("close", done);
    });
  }
}
