import { move } from "piscina";
import { decodeJson } from "../../../shared/nats/index.js";
import { readLogMessage } from "../../../shared/records/index.js";
import { logEvents } from "./log-events.js";
import { sseFrame } from "./sse-frame.js";

/** A stored message of a job's log to frame as `log` events from line `from` on. */
export interface FramingRequest {
  /** The message's data as stored (JSON). */
  data: Uint8Array;
  /** Its stream sequence. */
  streamSeq: number;
  /** The attempt that wrote it. */
  attempt: number;
  /** The first line to frame (lines before it were sent before). */
  from: number;
}

const encoder = new TextEncoder();

/**
 * The thread's whole work (decision 0090): decoding, checking and framing a replayed message
 * off the gateway's event loop, which every tenant's requests share. The frames as UTF-8,
 * moved back to the gateway, or null for a message that is not a log message.
 */
export default function frameReplayed({ data, streamSeq, attempt, from }: FramingRequest): Uint8Array | null {
  let stored;
  try {
    stored = readLogMessage(decodeJson(data));
  } catch {
    return null;
  }
  if (stored === undefined) return null;
  let text = "";
  for (const event of logEvents(stored, attempt, streamSeq, from)) text += sseFrame(event);
  return move(encoder.encode(text)) as Uint8Array;
}
