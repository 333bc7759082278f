import { parentPort } from "node:worker_threads";
import { decodeJson } from "../../../shared/nats/index.js";
import { readLogMessage } from "../../../shared/records/index.js";
import { logEvents } from "./log-events.js";
import { sseFrame } from "./sse-frame.js";

/** A stored message of a job's log to frame as `log` events from line `from` on. */
export interface FramingRequest {
  id: number;
  /** The message's data as stored (JSON). */
  data: Uint8Array;
  /** Its stream sequence. */
  streamSeq: number;
  /** The attempt that wrote it. */
  attempt: number;
  /** The first line to frame (lines before it were sent before). */
  from: number;
}

/** The frames as UTF-8 (`framed`), or null for a message that is not a log message; `error` when framing threw. */
export type FramingAnswer = { id: number; framed: Uint8Array | null } | { id: number; error: string };

const encoder = new TextEncoder();

function frame({ data, streamSeq, attempt, from }: FramingRequest): Uint8Array | null {
  let stored;
  try {
    stored = readLogMessage(decodeJson(data));
  } catch {
    return null;
  }
  if (stored === undefined) return null;
  let text = "";
  for (const event of logEvents(stored, attempt, streamSeq, from)) text += sseFrame(event);
  return encoder.encode(text);
}

// The thread's whole work: decoding, checking and framing a replayed message off the
// gateway's event loop, which every tenant's requests share (decision 0090).
parentPort?.on("message", (request: FramingRequest) => {
  let answer: FramingAnswer;
  try {
    answer = { id: request.id, framed: frame(request) };
  } catch (error) {
    answer = { id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
  const transfer = "framed" in answer && answer.framed ? [answer.framed.buffer as ArrayBuffer] : [];
  parentPort?.postMessage(answer, transfer);
});
