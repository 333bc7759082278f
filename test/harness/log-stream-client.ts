import { get, type IncomingMessage } from "node:http";
import { expect } from "vitest";
import { LogEndEventData, LogEventData } from "../../shared/contract/index.js";

/** One Server-Sent Events frame as written on the wire. */
export interface Frame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** Reads frames off a raw response body, one at a time, so a test can stop (disconnect) anywhere. */
export class FrameReader {
  private buffer = "";
  private readonly decoder = new TextDecoder();
  private readonly chunks: AsyncIterator<Buffer>;

  constructor(body: IncomingMessage) {
    this.chunks = body[Symbol.asyncIterator]();
  }

  /** The next frame, or null when the server closed the stream. */
  async next(): Promise<Frame | null> {
    for (;;) {
      const end = this.buffer.indexOf("\n\n");
      if (end >= 0) {
        const block = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        const frame: Frame = {};
        for (const line of block.split("\n")) {
          const colon = line.indexOf(":");
          const [field, value] =
            colon < 0 ? [line, ""] : [line.slice(0, colon), line.slice(colon + 1).replace(/^ /, "")];
          if (field === "") frame.comment = value;
          else if (field === "id" || field === "event" || field === "data") frame[field] = value;
        }
        return frame;
      }
      const { done, value } = await this.chunks.next().catch(() => ({ done: true as const, value: undefined }));
      if (done) return null;
      this.buffer += this.decoder.decode(value, { stream: true });
    }
  }

  /** The next `log` or `end` event, skipping comments. */
  async nextEvent(): Promise<Frame | null> {
    for (;;) {
      const frame = await this.next();
      if (frame === null || frame.event !== undefined) return frame;
    }
  }
}

/**
 * Opens a job's log stream (`path`, with its query for a signed URL) on a connection of
 * its own (node:http, no pool), so `disconnect` closes exactly that connection, as a
 * browser tab going away would. Expects the stream to open (200).
 */
export async function openLogStream(baseUrl: string, path: string, headers: Record<string, string> = {}) {
  const opened = await tryLogStream(baseUrl, path, headers);
  expect(opened.response.statusCode, opened.body).toBe(200);
  return opened;
}

/** The same, whatever the answer: a refusal's status and body (the envelope), or the open stream. */
export async function tryLogStream(baseUrl: string, path: string, headers: Record<string, string> = {}) {
  const request = get(`${baseUrl}${path}`, { headers, agent: false });
  const response = await new Promise<IncomingMessage>((resolve, reject) =>
    request.once("response", resolve).once("error", reject),
  );
  let body = "";
  if (response.statusCode !== 200) {
    for await (const chunk of response) body += String(chunk);
  }
  return { response, body, frames: new FrameReader(response), disconnect: () => request.destroy() };
}

/** Every `log` event until `end`; returns both. */
export async function readToEnd(frames: FrameReader) {
  const logs: Array<{ id: number; data: LogEventData }> = [];
  for (;;) {
    const frame = await frames.nextEvent();
    if (frame === null) throw new Error("the stream closed without an end event");
    if (frame.event === "end") return { logs, end: LogEndEventData.parse(JSON.parse(frame.data!)) };
    expect(frame.event).toBe("log");
    logs.push({ id: Number(frame.id), data: LogEventData.parse(JSON.parse(frame.data!)) });
  }
}
