import { LOG_MESSAGE_MAX_LINES } from "../../../shared/records/index.js";

/** Where a line is in the log stream: its message's stream sequence and its index among the message's lines. */
export interface LogPosition {
  streamSeq: number;
  index: number;
}

/**
 * A `log` event's id: the stream sequence of the line's message × `LOG_MESSAGE_MAX_LINES`
 * plus the line's index in it. A whole number that grows with every stored line, so that
 * the line after an id is found on any replica without a gap or a duplicate.
 */
export function logEventId({ streamSeq, index }: LogPosition): number {
  return streamSeq * LOG_MESSAGE_MAX_LINES + index;
}

/** The line an event id names (0: before the first line). */
export function logPosition(eventId: number): LogPosition {
  return { streamSeq: Math.floor(eventId / LOG_MESSAGE_MAX_LINES), index: eventId % LOG_MESSAGE_MAX_LINES };
}
