import { LogEndEventData, LogEventData, logStreamPath } from "../../../shared/contract/index.js";
import { ApiError } from "./errors.js";
import { pause, retryDelayMs, DEFAULT_RETRY_POLICY } from "./retry-policy.js";
import { readServerSentEvents } from "./sse.js";
import type { Transport } from "./transport.js";

/** One item of a job's log stream: a stored line, or the end (the job is terminal and every line was sent). */
export type LogStreamItem = { type: "log"; id: string; line: LogEventData } | { type: "end"; end: LogEndEventData };

export interface FollowLogsOptions {
  /** Start after this event id (the `id` of the last line you have). */
  lastEventId?: string | undefined;
  signal?: AbortSignal | undefined;
  /** Connections in a row that may drop without a line before giving up. Default 8. */
  maxReconnects?: number;
  /** Hears each reconnection before its wait: why the stream went, and where and when it is opened again. */
  onReconnect?: (reconnect: LogReconnect) => void;
}

/** The log stream is about to be opened again. */
export interface LogReconnect {
  /** The stream's URL. */
  url: string;
  /** This reconnection in the current run of drops, from 1, of at most `maxReconnects`. */
  attempt: number;
  maxReconnects: number;
  delayMs: number;
  /** Why: the connection that failed or dropped; undefined for a stream that ended without its `end`. */
  error: unknown;
}

/**
 * A job's log, line by line, until its `end`. A stream that drops (a gateway restarting,
 * a proxy's idle cut) is opened again with the last id received, so no line is missed or
 * repeated; refusals (404, 403) end the iteration with their ApiError.
 */
export async function* followLogs(
  transport: Transport,
  jobId: string,
  options: FollowLogsOptions = {},
): AsyncGenerator<LogStreamItem> {
  let lastEventId = options.lastEventId;
  const maxReconnects = options.maxReconnects ?? 8;
  let dropsInARow = 0;
  const reconnectLater = async (error: unknown) => {
    dropsInARow += 1;
    const delayMs = retryDelayMs(DEFAULT_RETRY_POLICY, dropsInARow, undefined);
    options.onReconnect?.({
      url: transport.url(logStreamPath(jobId)),
      attempt: dropsInARow,
      maxReconnects,
      delayMs,
      error,
    });
    await pause(delayMs, options.signal);
  };
  for (;;) {
    let response: Response;
    try {
      response = await transport.request("GET", logStreamPath(jobId), undefined, {
        idempotent: true,
        signal: options.signal,
        headers: {
          accept: "text/event-stream",
          ...(lastEventId !== undefined ? { "last-event-id": lastEventId } : {}),
        },
      });
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 0 || dropsInARow >= maxReconnects) throw error;
      await reconnectLater(error);
      continue;
    }
    let dropped: unknown;
    try {
      for await (const event of readServerSentEvents(response.body!)) {
        if (event.event === "log" && event.id !== undefined) {
          lastEventId = event.id;
          dropsInARow = 0;
          yield { type: "log", id: event.id, line: LogEventData.parse(JSON.parse(event.data)) };
        } else if (event.event === "end") {
          yield { type: "end", end: LogEndEventData.parse(JSON.parse(event.data)) };
          return;
        }
      }
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (!isDroppedStream(error)) throw error;
      dropped = error;
    }
    // Closed without `end`: open it again from the last line received.
    if (dropsInARow >= maxReconnects)
      throw new ApiError({
        code: "network.error",
        status: 0,
        message: `The log stream of ${jobId} kept closing before its end.`,
      });
    await reconnectLater(dropped);
  }
}

/** A read that failed because the connection went (not a parse error of ours). */
function isDroppedStream(error: unknown): boolean {
  return (
    error instanceof TypeError ||
    (error instanceof Error && /terminated|socket|ECONNRESET|aborted/i.test(error.message))
  );
}
