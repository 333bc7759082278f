import type { ServerResponse } from "node:http";
import { setImmediate as nextTurn } from "node:timers/promises";

/**
 * Frames written in one run before the writer yields to the event loop: a stored message
 * of a megabyte of lines is encoded in slices, so other requests are served in between.
 */
const RUN_CHARS = 64 * 1024;

export interface SseEvent {
  name: string;
  /** Written as JSON. */
  data: unknown;
  id?: number | undefined;
}

function frame({ name, data, id }: SseEvent): string {
  const idLine = id === undefined ? "" : `id: ${id}\n`;
  return `${idLine}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Writes Server-Sent Events on a raw response. Each frame (or run of frames) is one
 * `write`, so frames never interleave; a full socket buffer makes the writer wait (the log tail then stops reading
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
    return this.write(frame({ name, data, id }));
  }

  /** Several events, written in runs of about RUN_CHARS, yielding between runs. */
  async events(events: readonly SseEvent[]): Promise<void> {
    let run = "";
    for (const event of events) {
      run += frame(event);
      if (run.length < RUN_CHARS) continue;
      await this.write(run);
      run = "";
      await nextTurn();
    }
    if (run !== "") await this.write(run);
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
