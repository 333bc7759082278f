import type { LogEventData } from "../../../shared/contract/index.js";
import type { StoredLogLines } from "../../../shared/records/index.js";
import { logEventId } from "./log-event-id.js";
import type { SseEvent } from "./sse-frame.js";

/** A stored message's lines from index `from` on, as `log` events, each with its position as id. */
export function logEvents(stored: StoredLogLines, attempt: number, streamSeq: number, from: number): SseEvent[] {
  const events: SseEvent[] = [];
  for (let index = from; index < stored.lines.length; index += 1) {
    const { seq, stream, line, ts } = stored.lines[index]!;
    events.push({
      name: "log",
      data: { attempt, seq, stream, line, ts } satisfies LogEventData,
      id: logEventId({ streamSeq, index }),
    });
  }
  return events;
}
