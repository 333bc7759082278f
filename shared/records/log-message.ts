import { z } from "zod";
import { LogLine } from "../contract/index.js";

/** At most this many lines in one message of the log stream: a line's SSE event id counts on that. */
export const LOG_MESSAGE_MAX_LINES = 1000;

/**
 * One message of the log stream (`CJS_LOGS`, on `subjects.jobLogs(job, attempt)`):
 * consecutive lines of one attempt, stored by one publish, so all of them or none. Only the
 * log relay writes it, each message a compare-and-set on the subject's last sequence.
 */
export const LogMessage = z.looseObject({
  /**
   * How many lines the attempt may store (the job's cap less what its earlier attempts
   * used), the same in each of its messages, until the attempt reaches its byte budget:
   * from the message that does, the `seq` of the last line within it.
   */
  budget: z.number().int().min(0),
  /** Bytes of line text the attempt may store (the job's byte cap less what its earlier attempts stored); absent in messages stored before byte caps. */
  byte_budget: z.number().int().min(0).optional(),
  /** Bytes of line text the attempt stored up to and including this message; absent in messages stored before byte caps. */
  bytes: z.number().int().min(0).optional(),
  /** In `seq` order, each `seq` above the last one stored before; the last may be the marker that stands for lines past the cap. */
  lines: z.array(LogLine).min(1).max(LOG_MESSAGE_MAX_LINES),
});
export type LogMessage = z.infer<typeof LogMessage>;

/** What a message of the log stream holds; `budget` is unknown for a message of one bare line (as versions before `LogMessage` stored them). */
export interface StoredLogLines {
  budget: number | undefined;
  byte_budget?: number | undefined;
  bytes?: number | undefined;
  lines: LogLine[];
}

/** The bytes of a line that count against the byte caps: its text, as UTF-8. */
export function lineBytes(line: Pick<LogLine, "line">): number {
  return Buffer.byteLength(line.line, "utf8");
}

/** The lines of a log stream message (decoded JSON), or undefined when it is neither a `LogMessage` nor one bare line. */
export function readLogMessage(value: unknown): StoredLogLines | undefined {
  const message = LogMessage.safeParse(value);
  if (message.success) return message.data;
  const line = LogLine.safeParse(value);
  return line.success ? { budget: undefined, lines: [line.data] } : undefined;
}
