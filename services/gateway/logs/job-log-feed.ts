import { randomUUID } from "node:crypto";
import {
  AckPolicy,
  DeliverPolicy,
  type Consumer,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
} from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { AppError } from "../../../shared/errors/index.js";
import { decodeJson, STREAMS, subjects } from "../../../shared/nats/index.js";
import { readLogMessage, type StoredLogLines } from "../../../shared/records/index.js";

/**
 * What a feed keeps of the job's newest messages for its viewers, in bytes of stored data.
 * A viewer further behind reads from the stream itself; this only bounds the memory one
 * watched job costs.
 */
const FEED_BUFFER_BYTES = 512 * 1024;
/**
 * How long a job's feed outlives its last viewer: a viewer that comes back (an SSE
 * reconnect, a page reload, a client opening the stream again) finds it open, instead of
 * two JetStream API requests (the stream's end, a consumer) before its first line.
 */
const FEED_LINGER_MS = 5_000;
/**
 * How long the server keeps a feed's consumer nobody pulls from: only one whose gateway
 * died without deleting it waits this long, holding a place in the stream's `max_consumers`.
 */
const FEED_CONSUMER_IDLE_MS = 10_000;

/** One stored message of a job's log, decoded once for every viewer. */
export interface FeedMessage {
  /** Its stream sequence. */
  readonly seq: number;
  /** The attempt that wrote it (the last token of its subject). */
  readonly attempt: number;
  /** Its lines; undefined for a message that is not a log message (skipped, never fatal). */
  readonly stored: StoredLogLines | undefined;
  readonly size: number;
}

/**
 * A message of the log stream as a feed message, decoded when a viewer first reads its
 * lines: a feed opened on a long log passes most of it by before any viewer gets there
 * (they read what it no longer keeps from the stream), and those are never decoded.
 */
export function feedMessage(seq: number, subject: string, data: Uint8Array): FeedMessage {
  let raw: Uint8Array | undefined = data;
  let stored: StoredLogLines | undefined;
  return {
    seq,
    attempt: Number(subject.slice(subject.lastIndexOf(".") + 1)),
    size: data.length,
    get stored() {
      if (raw !== undefined) {
        try {
          stored = readLogMessage(decodeJson(raw));
        } catch {
          stored = undefined;
        }
        raw = undefined;
      }
      return stored;
    },
  };
}

/**
 * One job's log as this gateway replica reads it: one consumer, however many
 * clients watch the job, so the consumers on `CJS_LOGS` grow with the jobs watched, not
 * with the viewers. It keeps the job's newest messages (up to `FEED_BUFFER_BYTES`) for
 * the viewers to take at their own pace; a viewer never slows the feed or another viewer.
 */
export class JobLogFeed {
  private readonly buffer: FeedMessage[] = [];
  private bufferBytes = 0;
  /** Every message of the job with a stream sequence above this is in the buffer, or still to come. */
  private covered: number;
  private waiters: Array<() => void> = [];
  private consumer: Consumer | undefined;
  private messages: ConsumerMessages | undefined;
  private ended = false;
  private deleted: Promise<void> = Promise.resolve();
  private markClosed: () => void = () => undefined;
  /** Settles when the feed stops. */
  readonly whenClosed = new Promise<void>((resolve) => {
    this.markClosed = resolve;
  });
  viewers = 0;

  private constructor(
    readonly jobId: string,
    fromSeq: number,
    private readonly log: Logger,
  ) {
    this.covered = fromSeq - 1;
  }

  /**
   * Opens the job's consumer at the end of the stream: lines stored before it are read by
   * each viewer from the stream at its own pace, so a feed opened on a long log fetches
   * nothing no viewer asked for. Throws an AppError (503) when JetStream refuses it.
   */
  static async open(js: JetStreamClient, jsm: JetStreamManager, jobId: string, log: Logger): Promise<JobLogFeed> {
    let fromSeq: number;
    try {
      // Whatever is stored after this read has a higher sequence, so the consumer delivers it.
      fromSeq = (await jsm.streams.info(STREAMS.logs)).state.last_seq + 1;
    } catch (error) {
      throw unavailable(error);
    }
    const feed = new JobLogFeed(jobId, fromSeq, log);
    try {
      // Our own consumer, not an ordered one: an ordered consumer recreated (after missed
      // heartbeats) while the feed closes outlives the deletion by five minutes. This one is
      // never recreated, and one left behind (a gateway killed) goes after FEED_CONSUMER_IDLE_MS.
      const { name } = await jsm.consumers.add(STREAMS.logs, {
        name: `log-feed-${randomUUID()}`,
        filter_subject: subjects.jobLogsOfJob(jobId),
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: fromSeq,
        ack_policy: AckPolicy.None,
        inactive_threshold: nanos(FEED_CONSUMER_IDLE_MS),
        num_replicas: 1,
        mem_storage: true,
      });
      feed.consumer = await js.consumers.get(STREAMS.logs, name);
      feed.messages = await feed.consumer.consume({ abort_on_missing_resource: true });
    } catch (error) {
      if (feed.consumer) void feed.close();
      throw unavailable(error);
    }
    void feed.pump();
    return feed;
  }

  /** Every job message above this sequence is in `after`'s reach, or still to come. */
  get coveredFrom(): number {
    return this.covered;
  }

  /** True once the feed has stopped (closed, or its consumer failed): its viewers end, and their clients resume. */
  get closed(): boolean {
    return this.ended;
  }

  /** The first kept message after stream sequence `seq`, if any. */
  after(seq: number): FeedMessage | undefined {
    return this.buffer.find((message) => message.seq > seq);
  }

  /** Resolves at the next message or when the feed stops. */
  changed(): Promise<void> {
    if (this.ended) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * Stops the feed; resolves once its consumer is deleted (or the deletion failed). The
   * server would drop the idle consumer only after five minutes (an ordered consumer's
   * `inactive_threshold`), holding a place in the stream's `max_consumers` till then.
   */
  close(): Promise<void> {
    if (this.ended) return this.deleted;
    this.ended = true;
    const { consumer, messages } = this;
    this.deleted = (async () => {
      await messages?.close();
      await consumer?.delete();
    })().then(
      () => undefined,
      () => undefined,
    );
    this.wake();
    this.markClosed();
    return this.deleted;
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  private async pump(): Promise<void> {
    const messages = this.messages;
    if (!messages) return;
    try {
      let delivered = 0;
      for await (const message of messages) {
        if (this.ended) break;
        // A message the connection dropped (a slow consumer) is not redelivered (no acks):
        // the feed ends, and its viewers resume from the stream.
        if (message.info.deliverySequence !== delivered + 1) throw new Error("a job's log feed missed a message");
        delivered = message.info.deliverySequence;
        const decoded = feedMessage(message.seq, message.subject, message.data);
        this.buffer.push(decoded);
        this.bufferBytes += decoded.size;
        while (this.buffer.length > 1 && this.bufferBytes > FEED_BUFFER_BYTES) {
          const dropped = this.buffer.shift()!;
          this.bufferBytes -= dropped.size;
          this.covered = dropped.seq;
        }
        this.wake();
      }
    } catch (error) {
      this.log.warn({ err: error, job_id: this.jobId }, "a job's log feed failed; its viewers will resume");
    } finally {
      void this.close();
    }
  }
}

/** JetStream code of "maximum consumers limit reached" (the stream's `max_consumers`). */
const MAX_CONSUMERS_REACHED = 10026;

function unavailable(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === MAX_CONSUMERS_REACHED)
    return new AppError(
      "service.unavailable",
      "The service streams as many jobs' logs as it may right now; try again shortly.",
      { retryAfterSeconds: 5, details: { reason: "log_consumers" } },
    );
  return error;
}

/**
 * The feeds of this gateway replica, one per job watched, shared by its viewers and
 * closed `FEED_LINGER_MS` after the last one goes (a feed without viewers gives its place
 * up at once when another job needs it). At most `maxJobs` at once
 * (`CJS_LOG_STREAM_JOBS_MAX`): one more job is refused with 503 and `Retry-After`, never a 500.
 */
export class JobLogFeeds {
  private readonly feeds = new Map<string, Promise<JobLogFeed>>();
  /** Feeds without viewers, oldest first, each with the timer that closes it. */
  private readonly idle = new Map<JobLogFeed, NodeJS.Timeout>();

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: Promise<JetStreamManager>,
    private readonly maxJobs: number,
  ) {}

  get size(): number {
    return this.feeds.size;
  }

  /** The job's feed, opened when none is open; the caller must `release` it. */
  async acquire(jobId: string, log: Logger): Promise<JobLogFeed> {
    let opening = this.feeds.get(jobId);
    if (!opening) {
      if (this.feeds.size >= this.maxJobs) this.closeOldestIdle();
      if (this.feeds.size >= this.maxJobs)
        throw new AppError(
          "service.unavailable",
          "This gateway streams as many jobs' logs as it may right now; try again shortly.",
          { retryAfterSeconds: 5, details: { reason: "log_stream_jobs" } },
        );
      opening = this.jsm.then((jsm) => JobLogFeed.open(this.js, jsm, jobId, log));
      this.feeds.set(jobId, opening);
      opening.then(
        (feed) => void this.forgetWhenClosed(feed),
        () => this.feeds.delete(jobId),
      );
    }
    const feed = await opening;
    if (feed.closed) {
      // It failed or was closed meanwhile: a fresh one.
      if (this.feeds.get(jobId) === opening) this.feeds.delete(jobId);
      return this.acquire(jobId, log);
    }
    feed.viewers += 1;
    this.wake(feed);
    return feed;
  }

  release(feed: JobLogFeed): void {
    feed.viewers -= 1;
    if (feed.viewers > 0 || feed.closed) return;
    const timer = setTimeout(() => this.closeIdle(feed), FEED_LINGER_MS);
    timer.unref();
    this.idle.set(feed, timer);
  }

  /** A viewer came back: the feed stays. */
  private wake(feed: JobLogFeed): void {
    const timer = this.idle.get(feed);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.idle.delete(feed);
  }

  /** Closes a feed nobody watches (`forgetWhenClosed` then drops it from the map). */
  private closeIdle(feed: JobLogFeed): void {
    this.wake(feed);
    void feed.close();
  }

  /** Makes room for another job: the feed idle the longest goes now, and its place with it (an open feed's entry is its own). */
  private closeOldestIdle(): void {
    const oldest = this.idle.keys().next();
    if (oldest.done) return;
    this.closeIdle(oldest.value);
    this.feeds.delete(oldest.value.jobId);
  }

  /**
   * Closes every feed; resolves once their consumers are deleted, so a gateway stopping
   * awaits it before closing its connection (else the deletions never leave, and each
   * consumer holds a place in the stream's budget until the server drops it).
   */
  async closeAll(): Promise<void> {
    for (const timer of this.idle.values()) clearTimeout(timer);
    this.idle.clear();
    await Promise.all(
      [...this.feeds.values()].map((opening) => opening.then((feed) => feed.close()).catch(() => undefined)),
    );
  }

  private async forgetWhenClosed(feed: JobLogFeed): Promise<void> {
    await feed.whenClosed;
    const current = this.feeds.get(feed.jobId);
    if (current && (await current) === feed) this.feeds.delete(feed.jobId);
  }
}
