import type { ServerResponse } from "node:http";
import { setImmediate as nextTurn } from "node:timers/promises";
import { type SseEvent, sseFrame as frame } from "./sse-frame.js";

/**
 * Frames written in one run before the writer yields to the event loop: a stored message
 * of a megabyte of lines is encoded in slices, so other requests are served in between.
 */
export const RUN_CHARS = 64 * 1024;

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

  /**
   * Whole frames made elsewhere (`sseFrame`, as UTF-8), written in runs of about RUN_CHARS
   * bytes that end where a frame does, yielding between runs: a keep-alive written in
   * between never lands inside a frame.
   */
  async framed(bytes: Uint8Array): Promise<void> {
    let start = 0;
    while (start < bytes.length) {
      if (start > 0) await nextTurn();
      const end = runEnd(bytes, start);
      await this.write(bytes.subarray(start, end));
      start = end;
    }
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

  private write(frame: string | Uint8Array): Promise<void> {
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

const LINE_FEED = 0x0a;

/**
 * Where a run of whole frames that starts at `start` ends: after the last blank line (a
 * frame's end; a frame's lines are never blank) within RUN_CHARS bytes, or after the first
 * one past them when a single frame is longer; the bytes' end when there is none.
 */
export function runEnd(bytes: Uint8Array, start: number): number {
  const limit = start + RUN_CHARS;
  if (limit >= bytes.length) return bytes.length;
  for (let at = limit - 1; at > start; at -= 1) {
    if (bytes[at] === LINE_FEED && bytes[at - 1] === LINE_FEED) return at + 1;
  }
  for (let at = limit; at < bytes.length; at += 1) {
    if (bytes[at] === LINE_FEED && bytes[at - 1] === LINE_FEED) return at + 1;
  }
  return bytes.length;
}
