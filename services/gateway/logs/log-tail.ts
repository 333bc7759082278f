import type { ServerResponse } from "node:http";
import type { JetStreamManager, MsgRequest } from "@nats-io/jetstream";
import type { Subscription } from "@nats-io/transport-node";
import type { Logger } from "pino";
import {
  isTerminal,
  type Job,
  type LogEndEventData,
  type LogEventData,
  type UserContext,
} from "../../../shared/contract/index.js";
import { requestRpc, STREAMS, subjects } from "../../../shared/nats/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { callersJob } from "../rpc/callers-job.js";
import { feedMessage, type FeedMessage, type JobLogFeed, type JobLogFeeds } from "./job-log-feed.js";
import { logEventId, logPosition, type LogPosition } from "./log-event-id.js";
import { type SseEvent, SseWriter } from "./sse-writer.js";
import type { KeyedPacer } from "../rate-limit/pacer.js";
import { logStreamPaced } from "./log-stream-metrics.js";

export interface LogTailOptions {
  gw: GatewayContext;
  feeds: JobLogFeeds;
  jsm: Promise<JetStreamManager>;
  /**
   * The stored bytes a second each business's streams may read back from the stream on
   * this replica, all together: replaying a long log to many viewers costs a read, a decode
   * and an encode per byte, and unpaced, one tenant's viewers would take the replica's
   * event loop from the others.
   */
  bandwidth: KeyedPacer;
  caller: UserContext;
  jobId: string;
  /** The event id of the last line the client has (`Last-Event-ID`), 0 for all. */
  after: number;
  keepAliveMs: number;
  log: Logger;
}

/**
 * One client's view of a job's log: replays the job's lines from the log stream after a
 * position, tails new ones, and ends with an `end` event once the job is terminal and
 * every line stored by then was sent. `open` does everything that can fail with an error
 * envelope (tenancy, the job's feed); `start` writes the stream.
 *
 * The lines come from the job's feed, shared with every other viewer of the job on this
 * replica (`JobLogFeed`); a viewer behind what the feed keeps reads the messages it lacks
 * from the stream, one by one, until it has caught up.
 *
 * A stream message holds several lines; a line's event id is its position, the message's
 * stream sequence and the line's index in it (`logEventId`). It grows with every line, so
 * resuming after it misses nothing and repeats nothing.
 */
export class LogTail {
  private transitions: Subscription | undefined;
  private feed: JobLogFeed | undefined;
  private sse: SseWriter | undefined;
  private keepAlive: NodeJS.Timeout | undefined;
  private job: Job | undefined;
  /** The line the client had when it opened the stream: lines up to it are not sent again. */
  private readonly resumed: LogPosition;
  /** The stream sequence of the last message whose lines have all been sent. */
  private lastSent: number;
  /** Once the job is terminal: the last stream sequence to send before `end`. */
  private ending: { job: Job; lastSeq: number } | undefined;
  private finishing = false;
  private checking = false;
  private recheck = false;
  private closed = false;
  private wakeOnClose: () => void = () => undefined;
  private readonly whenClosed = new Promise<void>((resolve) => {
    this.wakeOnClose = resolve;
  });
  private readonly closeListeners: Array<() => void> = [];

  constructor(private readonly options: LogTailOptions) {
    this.resumed = logPosition(options.after);
    this.lastSent = Math.max(0, this.resumed.streamSeq - 1);
  }

  /** Checks the job is the caller's and joins its feed; throws (an AppError) before anything is written. */
  async open(): Promise<void> {
    const { gw, feeds, caller, jobId, log } = this.options;
    // Subscribed before the job is read, so no transition is missed; one before `start` is kept as `recheck`.
    this.transitions = gw.nc.subscribe(subjects.jobTransitioned(jobId), { callback: () => void this.checkEnd() });
    try {
      this.job = await callersJob(gw, caller, jobId);
      this.feed = await feeds.acquire(jobId, log);
    } catch (error) {
      this.close();
      throw error;
    }
  }

  /** Writes the stream on `response` until the job ends, the client goes, or the gateway closes. */
  start(response: ServerResponse, headers: Record<string, string>): void {
    response.writeHead(200, {
      ...headers,
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    });
    response.flushHeaders();
    this.sse = new SseWriter(response);
    response.once("close", () => this.close());
    // The client may have gone while the stream was being opened.
    if (response.destroyed || !response.socket || response.socket.destroyed) {
      this.close();
      return;
    }
    this.keepAlive = setInterval(() => {
      void this.sse?.comment("keep-alive");
      // A transition event missed while NATS reconnected still ends the stream.
      if (!this.ending) void this.checkEnd();
    }, this.options.keepAliveMs);
    void this.pump();
    if (this.job && isTerminal(this.job.state)) void this.settle(this.job);
    else if (this.recheck) void this.checkEnd();
  }

  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  /** Ends the stream without an `end` event (client gone, gateway closing, or a fault: the client resumes). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepAlive);
    this.transitions?.unsubscribe();
    if (this.feed) this.options.feeds.release(this.feed);
    this.wakeOnClose();
    this.sse?.end();
    for (const listener of this.closeListeners) listener();
  }

  private async pump(): Promise<void> {
    const feed = this.feed;
    if (!feed) return;
    try {
      const { app_id, business_id } = this.options.caller;
      const business = `${app_id}/${business_id}`;
      const { bandwidth } = this.options;
      while (!this.closed) {
        // A read from the stream (a replay, or a viewer fallen behind the feed) is paced: the
        // business's viewers read in turn and each pays for its message before the next reads,
        // so many viewers opening a long log at once fetch one message at a time. The live
        // tail from the feed is not: it comes at the rate the job's nodes push, which their
        // own quotas bound, and many viewers of one job must keep up with it.
        const message =
          this.lastSent >= feed.coveredFrom
            ? await this.nextMessage(feed)
            : await bandwidth.inTurn(business, async () => {
                const next = await this.nextMessage(feed);
                if (next && (await bandwidth.take(business, next.size, this.whenClosed))) logStreamPaced.inc();
                return next;
              });
        if (message === undefined) {
          // The feed stopped (the gateway closing, or its consumer failed): the client resumes.
          if (feed.closed) break;
          await Promise.race([feed.changed(), this.whenClosed]);
          continue;
        }
        if (this.closed) break;
        await this.send(message);
        this.lastSent = message.seq;
        await this.maybeEnd();
      }
    } catch (error) {
      this.options.log.warn({ err: error, job_id: this.options.jobId }, "log stream failed; the client will resume");
    } finally {
      this.close();
    }
  }

  /**
   * The job's next message after the last one sent: from the feed when the viewer is
   * within what it keeps, else from the stream itself. Undefined when there is none yet.
   *
   * From the stream, a direct get first: any replica answers it, with the message as it is
   * stored (the leader's answer is JSON with the data in base64, about a third of a
   * replay's cost). A replica holds a prefix of the stream, so a message it returns at or
   * below what the feed covers comes with every earlier message of the job. No answer, or
   * one past the feed: the leader's copy decides, so nothing the feed passed is missed.
   */
  private async nextMessage(feed: JobLogFeed): Promise<FeedMessage | undefined> {
    if (this.lastSent >= feed.coveredFrom) return feed.after(this.lastSent);
    const jsm = await this.options.jsm;
    const query = { seq: this.lastSent + 1, next_by_subj: subjects.jobLogsOfJob(this.options.jobId) };
    const direct = await jsm.direct.getMessage(STREAMS.logs, query).catch(() => null);
    if (direct && direct.seq <= feed.coveredFrom) return feedMessage(direct.seq, direct.subject, direct.data);
    const stored = await jsm.streams.getMessage(STREAMS.logs, query as unknown as MsgRequest);
    if (stored && stored.seq <= feed.coveredFrom) return feedMessage(stored.seq, stored.subject, stored.data);
    // None of the job's messages lies between the last one sent and what the feed keeps (or they aged out): go on from there.
    this.lastSent = feed.coveredFrom;
    return feed.after(this.lastSent);
  }

  /** Writes a message's lines as `log` events, each with its position as id. */
  private async send(message: FeedMessage): Promise<void> {
    const { stored, attempt } = message;
    if (!stored) {
      this.options.log.error(
        { job_id: this.options.jobId, seq: message.seq },
        "skipped a log message that is not a log message",
      );
      return;
    }
    // The resumed message's lines up to the client's last one were sent before.
    const from = message.seq === this.resumed.streamSeq ? this.resumed.index + 1 : 0;
    const events: SseEvent[] = [];
    for (let index = from; index < stored.lines.length; index += 1) {
      const { seq, stream, line, ts } = stored.lines[index]!;
      events.push({
        name: "log",
        data: { attempt, seq, stream, line, ts } satisfies LogEventData,
        id: logEventId({ streamSeq: message.seq, index }),
      });
    }
    await this.sse?.events(events);
  }

  /** Reads the job again after a transition (coalesced: one read at a time, one more if anything came in meanwhile). */
  private async checkEnd(): Promise<void> {
    if (this.closed || this.ending) return;
    if (this.checking || !this.sse) {
      this.recheck = true;
      return;
    }
    this.checking = true;
    try {
      do {
        this.recheck = false;
        const job = await callersJob(this.options.gw, this.options.caller, this.options.jobId);
        if (isTerminal(job.state)) {
          await this.settle(job);
          return;
        }
      } while (this.recheck && !this.closed);
    } catch (error) {
      this.options.log.warn(
        { err: error, job_id: this.options.jobId },
        "could not read the job of a log stream; trying again at the next keep-alive",
      );
    } finally {
      this.checking = false;
    }
  }

  /** The job is terminal: note the last line stored by now, and end once it is sent. */
  private async settle(job: Job): Promise<void> {
    try {
      const jsm = await this.options.jsm;
      const last = await jsm.streams.getMessage(STREAMS.logs, {
        last_by_subj: subjects.jobLogsOfJob(this.options.jobId),
      });
      this.ending ??= { job, lastSeq: last?.seq ?? 0 };
      await this.maybeEnd();
    } catch (error) {
      this.options.log.warn(
        { err: error, job_id: this.options.jobId },
        "could not settle a log stream; the client will resume",
      );
      this.close();
    }
  }

  private async maybeEnd(): Promise<void> {
    const ending = this.ending;
    if (!ending || this.finishing || this.closed || this.lastSent < ending.lastSeq) return;
    this.finishing = true;
    try {
      const summary = await requestRpc(this.options.gw.nc, "logsSummary", { job_id: this.options.jobId });
      const { job } = ending;
      const data: LogEndEventData = {
        state: job.state,
        attempt: job.attempt,
        exit_code: job.exit_code,
        error: job.error,
        dropped_lines: summary.dropped_lines,
      };
      await this.sse?.event("end", data);
    } catch (error) {
      this.options.log.warn(
        { err: error, job_id: this.options.jobId },
        "could not end a log stream; the client will resume",
      );
    } finally {
      this.close();
    }
  }
}
