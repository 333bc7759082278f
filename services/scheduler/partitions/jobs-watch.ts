import { DeliverPolicy, type JsMsg, type PushConsumer } from "@nats-io/jetstream";
import { Bucket, type KV } from "@nats-io/kv";
import { decodeJson } from "../../../shared/nats/index.js";
import { parseJobKey, partitionKeyFilters } from "../../../shared/records/index.js";
import type { Logger } from "../../../shared/runtime/index.js";
import { jobRepairs } from "../scheduler-metrics.js";
import type { SchedulerStore } from "../scheduler-store.js";
import type { JobRevision, JobRevisionListener } from "./job-revision.js";
import { lastStoredRevision, readStillStored } from "./missed-revisions.js";

export type { JobRevision, JobRevisionListener };

/** How long a caller waits for the watch to catch up with the bucket before it goes on with what it has. */
const CATCH_UP_LIMIT_MS = 2000;
/** How long the watch hands entries on before the event loop's other work gets a turn. */
const SLICE_MS = 5;
/** Own revisions awaiting their echo before those the feed has passed are looked for and dropped (then twice those left). */
const ECHOES_MIN = 10_000;

/** One message of the feed: a revision of a job record, and where it stands in the consumer's own sequence. */
export interface FeedEntry {
  key: string;
  revision: number;
  operation: "PUT" | "DEL" | "PURGE";
  value: Uint8Array;
  /** The consumer's delivery sequence: one more for each message it delivers, so a jump is a message not delivered. */
  consumerSeq: number;
  /** Messages still to come after this one, as the server counted when it sent it. */
  pending: number;
}

/** The revisions of the keys under some filters, last values first then every change, with where the consumer stands. */
export interface JobsFeed extends AsyncIterable<FeedEntry> {
  /** The consumer's delivered count and what it still has to deliver, asked of the server now. */
  position(): Promise<{ delivered: number; pending: number }>;
  /** Stops the feed and removes its consumer from the server (resolves when the server answered, or failed to). */
  stop(): Promise<void>;
}

/**
 * What the watch is fed from: an ordered consumer on the bucket's stream, or (tests) one
 * that loses entries on purpose. From `fromRevision` on when given, else each key's last
 * value and every change.
 */
export type OpenJobsFeed = (kv: KV, keyFilters: readonly string[], fromRevision?: number) => Promise<JobsFeed>;

const KV_OPERATION = "KV-Operation";

/** An ordered push consumer over the keys under `keyFilters` (each key's last value, or from `fromRevision`, then every change). */
export const orderedFeed: OpenJobsFeed = async (kv, keyFilters, fromRevision) => {
  if (!(kv instanceof Bucket)) throw new Error("the job watch needs a KV bucket opened by Kvm");
  const prefix = `$KV.${kv.bucket}.`;
  const consumer: PushConsumer = await kv.js.consumers.getPushConsumer(kv.stream, {
    filter_subjects: keyFilters.map((filter) => `${prefix}${filter}`),
    ...(fromRevision === undefined
      ? { deliver_policy: DeliverPolicy.LastPerSubject }
      : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: fromRevision }),
  });
  const messages = await consumer.consume();
  const toEntry = (message: JsMsg): FeedEntry => {
    const operation = message.headers?.get(KV_OPERATION);
    return {
      key: message.subject.slice(prefix.length),
      revision: message.seq,
      operation: operation === "DEL" || operation === "PURGE" ? operation : "PUT",
      value: message.data,
      consumerSeq: message.info.deliverySequence,
      pending: message.info.pending,
    };
  };
  return {
    async *[Symbol.asyncIterator]() {
      for await (const message of messages) yield toEntry(message);
    },
    async position() {
      const info = await consumer.info(false);
      return { delivered: info.delivered.consumer_seq, pending: info.num_pending };
    },
    // The server would keep a stopped ordered consumer, and match every new record against its filters, for five minutes.
    async stop() {
      messages.stop();
      await consumer.delete().catch(() => undefined);
    },
  };
};

/**
 * The replica's watch of the job records of the partitions it owns: one ordered consumer
 * filtered to their keys (each key's last value, then every change), each revision decoded
 * once and handed to every listener in the order of the bucket's stream. When the owned
 * partitions change, the consumer is made again for the new set: the listeners forget the
 * partitions given up, and those kept are delivered again (each listener ignores a
 * revision it holds). Decoding once keeps a revision's cost the same however many
 * pictures are kept from it, and a replica never reads another's partitions.
 *
 * The watch is not trusted to bring every revision that matters: a jump in the consumer's
 * delivery sequence is a message it did not hand on, so the stream range it covered is
 * read back from the bucket behind the watch, and what is still stored there (a job's
 * latest value) is handed on (`cjs_job_repairs_total{kind="watch_skipped"}`).
 * `recoverStalled` (the repair sweep) covers a skipped last revision of a partition,
 * which no later message reveals, and makes the consumer again when the feed brought
 * nothing at all between two checks while revisions waited (decision 0086).
 */
export class JobsWatch {
  #feed: JobsFeed | undefined;
  /** Bumped by each `follow`: entries of an earlier feed still on their way are dropped. */
  #generation = 0;
  #partitions: ReadonlySet<number> = new Set();
  #partitionList: readonly number[] = [];
  #seen = 0;
  /** The highest revision handed on per partition, for the stalled-watch check. */
  readonly #seenOf = new Map<number, number>();
  #consumerSeq = 0;
  #lastRevision = 0;
  #ready = true;
  /** The consumer sequence the first reading of the watched partitions ends at; infinite until known. */
  #readyAt = Number.POSITIVE_INFINITY;
  /** How many times the feed's consumer was made again: a count taken on an earlier one no longer compares. */
  #remade = 0;
  #readyWaiters: Array<() => void> = [];
  #waiters: Array<{ consumerSeq: number; resolve: () => void }> = [];
  /** What the last `recoverStalled` saw per partition: how far this replica knew it, and its last stored revision. */
  readonly #lastCheck = new Map<number, { known: number; last: number }>();
  #gapReads: Promise<void> = Promise.resolve();
  /** Revisions this replica wrote and handed on already, per key: their copy from the feed is not decoded again. */
  readonly #echoes = new Map<string, number>();
  #echoesLimit = ECHOES_MIN;
  #unread: Array<{ from: number; to: number; filters: string[] }> = [];
  /** Entries the feeds brought, and how many the last `recoverStalled` had seen: unchanged while revisions wait, the feed is silent. */
  #received = 0;
  #receivedAtCheck = -1;

  constructor(
    private readonly store: Pick<SchedulerStore, "jobs">,
    private readonly listeners: readonly JobRevisionListener[],
    private readonly logger?: Pick<Logger, "warn">,
    private readonly openFeed: OpenJobsFeed = orderedFeed,
  ) {}

  /** The highest revision handed to the listeners. */
  get seen(): number {
    return this.#seen;
  }

  /** The partitions watched now. */
  get partitions(): ReadonlySet<number> {
    return this.#partitions;
  }

  /** The partitions watched now, as a list (a submit picks one for a job id it chose). */
  get partitionList(): readonly number[] {
    return this.#partitionList;
  }

  /** Whether a feed is reading the watched partitions now (none while `follow` makes one, or after `stop`). */
  get following(): boolean {
    return this.#feed !== undefined;
  }

  /** Whether the watched partitions' records have all been read once since the last `follow` (placement waits for it). */
  get ready(): boolean {
    return this.#ready;
  }

  /** Resolves once the watched partitions' records have all been read once. */
  whenReady(): Promise<void> {
    return this.#ready ? Promise.resolve() : new Promise((resolve) => this.#readyWaiters.push(resolve));
  }

  /**
   * Watches these partitions from now on: the listeners forget the ones given up, and a new
   * consumer reads every record of the set again (a revision a listener holds changes
   * nothing). Resolves once the new consumer is made, not once it has caught up (`whenReady`).
   */
  async follow(partitions: ReadonlySet<number>): Promise<void> {
    const generation = (this.#generation += 1);
    const previous = this.#feed;
    this.#feed = undefined;
    for (const partition of this.#partitions) {
      if (partitions.has(partition)) continue;
      for (const listener of this.listeners) listener.dropPartition(partition);
      this.#seenOf.delete(partition);
      this.#lastCheck.delete(partition);
    }
    this.#partitions = new Set(partitions);
    this.#partitionList = [...partitions].sort((a, b) => a - b);
    this.#echoes.clear();
    this.#consumerSeq = 0;
    this.#readyAt = Number.POSITIVE_INFINITY;
    this.#lastRevision = 0;
    for (const waiter of this.#waiters.splice(0)) waiter.resolve();
    if (partitions.size === 0) this.#markReady();
    else this.#ready = false;
    // The consumer of the set given up goes before the next is made: a replica keeps one on the server.
    await previous?.stop();
    if (partitions.size === 0 || generation !== this.#generation) return;
    const feed = await this.openFeed(
      this.store.jobs.kv,
      [...partitions].sort((a, b) => a - b).flatMap(partitionKeyFilters),
    );
    if (generation !== this.#generation) {
      await feed.stop();
      return;
    }
    this.#feed = feed;
    this.#consume(feed, generation);
    // Ready once every record the partitions held when the consumer was made has been handed on (some may be on
    // their way already: the server counts what it delivered and what it still has to).
    const remade = this.#remade;
    const { delivered, pending } = await feed.position();
    // A consumer made again meanwhile counts afresh: its first message set the target (`#receive`).
    if (generation !== this.#generation || remade !== this.#remade) return;
    this.#readyAt = delivered + pending;
    if (this.#consumerSeq >= this.#readyAt) this.#markReady();
  }

  /**
   * A revision this replica wrote, handed to the listeners at once rather than when the
   * feed brings it back: a submitted job is placed, and an assignment counted against its
   * key, without waiting for the echo, which is then not decoded again (nor an earlier
   * revision of the key still to come). A job of a partition not watched is not kept (no
   * feed would update it); a revision the feed brought first is not handed on twice.
   */
  noteWritten(key: string, revision: number, record: Record<string, unknown>, data: Uint8Array): void {
    const partition = parseJobKey(key)?.partition;
    // The feed delivers in the stream's order: past this revision, it has handed it on already.
    if (partition === undefined || !this.#partitions.has(partition) || revision <= this.#lastRevision) return;
    if (this.#echoes.size >= this.#echoesLimit) this.#forgetPassedEchoes();
    this.#echoes.set(key, revision);
    this.#hand({ key, revision, record, data, own: true });
  }

  /** Resolves once the gaps seen so far have been read back (and what they held handed on). */
  gapsRead(): Promise<void> {
    return this.#gapReads;
  }

  /**
   * Resolves once every write the watched partitions held when this was called has reached
   * the listeners (read-your-writes for a request that follows a write on another replica):
   * true then; false after a bound of `CATCH_UP_LIMIT_MS`, or while the partitions change.
   * A watch still reading partitions it was just given, and a consumer made again during
   * the check, are waited for within the same bound.
   */
  async caughtUp(limitMs = CATCH_UP_LIMIT_MS): Promise<boolean> {
    const until = performance.now() + limitMs;
    if (!this.#ready && !(await this.#readyWithin(limitMs))) return false;
    for (;;) {
      const feed = this.#feed;
      if (!feed) return this.#partitions.size === 0;
      const [generation, remade] = [this.#generation, this.#remade];
      const { delivered, pending } = await feed.position();
      if (generation !== this.#generation) return false;
      // Counted on a consumer made again meanwhile (a NATS node's restart): not comparable with where the watch
      // stands, so the new one is asked (giving up here answered a list 503 as if partitions were moving).
      if (remade !== this.#remade) {
        if (performance.now() < until) continue;
        return false;
      }
      const target = delivered + pending;
      if (this.#consumerSeq >= target) return true;
      return new Promise<boolean>((resolve) => {
        const waiter = { consumerSeq: target, resolve: () => finish(generation === this.#generation) };
        const timer = setTimeout(() => finish(false), Math.max(0, until - performance.now()));
        const finish = (reached: boolean): void => {
          clearTimeout(timer);
          this.#waiters = this.#waiters.filter((each) => each !== waiter);
          resolve(reached);
        };
        this.#waiters.push(waiter);
      });
    }
  }

  /**
   * The repair sweep's check for a skipped last revision: per watched partition, when the
   * watch has not moved since the previous check although the partition then held later
   * revisions, those are read from the bucket and handed on. A watch that is only slow
   * moves between checks. Gaps whose read failed are read again first.
   */
  async recoverStalled(): Promise<void> {
    for (const gap of this.#unread.splice(0)) await this.#fillGap(gap.from, gap.to, gap.filters);
    const [received, silentSince] = [this.#received, this.#receivedAtCheck];
    this.#receivedAtCheck = received;
    let stalled = false;
    for (const partition of this.#partitions) {
      const filters = partitionKeyFilters(partition);
      let last = 0;
      for (const filter of filters) last = Math.max(last, await lastStoredRevision(this.store.jobs.kv, filter));
      const known = this.#seenOf.get(partition) ?? 0;
      const previous = this.#lastCheck.get(partition);
      this.#lastCheck.set(partition, { known, last });
      if (previous && previous.last > previous.known && known === previous.known) {
        stalled = true;
        await this.#fillGap(previous.known + 1, previous.last, filters);
      }
    }
    if (stalled && received === silentSince) await this.#remakeFeed();
  }

  /**
   * A feed that brought nothing between two checks while revisions waited is silent: its
   * consumer is gone (it lived on a NATS node that died, and nats.js notices only after two
   * missed 30 s heartbeats). A new one is made from the next revision on, without reading
   * the partitions again; what the silence held was read by the check.
   */
  async #remakeFeed(): Promise<void> {
    const [old, generation] = [this.#feed, this.#generation];
    if (!old) return;
    this.logger?.warn(
      { after_revision: this.#lastRevision },
      "the job watch brought nothing while job records changed; its consumer is made again",
    );
    jobRepairs.inc({ kind: "watch_remade" });
    // Still reading its partitions: read them again, so readiness is counted on the new consumer from the start.
    if (!this.#ready) {
      await this.follow(this.#partitions);
      return;
    }
    const feed = await this.openFeed(this.store.jobs.kv, this.#filters(), this.#lastRevision + 1);
    if (generation !== this.#generation || this.#feed !== old) {
      await feed.stop();
      return;
    }
    this.#feed = feed;
    this.#consume(feed, generation);
    await old.stop();
  }

  /**
   * Hands on the feed's entries while it is the watch's feed. A backlog (a replay of the
   * partitions) is handed on in slices, with the event loop's other work between them: one
   * unbroken pass held back everything else on the connection, the partitions' lease renewals
   * included, and on a starved machine a replica gaining partitions let them go again.
   */
  #consume(feed: JobsFeed, generation: number): void {
    void (async () => {
      let sliceStart = performance.now();
      for await (const entry of feed) {
        if (generation !== this.#generation || feed !== this.#feed) return;
        this.#receive(entry);
        if (performance.now() - sliceStart < SLICE_MS) continue;
        await new Promise((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
    })();
  }

  async stop(): Promise<void> {
    this.#generation += 1;
    const feed = this.#feed;
    this.#feed = undefined;
    this.#echoes.clear();
    for (const waiter of this.#waiters.splice(0)) waiter.resolve();
    this.#markReady();
    await feed?.stop();
  }

  #receive(entry: FeedEntry): void {
    this.#received += 1;
    // A jump in the consumer's own sequence is a message it did not hand on: its stream range is read behind the watch,
    // one gap after another, never holding the watch up (each listener ignores a revision older than the one it holds).
    if (entry.consumerSeq <= this.#consumerSeq) this.#countAfresh(entry);
    else if (entry.consumerSeq > this.#consumerSeq + 1 && entry.revision > this.#lastRevision + 1) {
      const [from, to, filters] = [this.#lastRevision + 1, entry.revision - 1, this.#filters()];
      this.#gapReads = this.#gapReads.then(() => this.#fillGap(from, to, filters));
    }
    this.#consumerSeq = entry.consumerSeq;
    this.#lastRevision = entry.revision;
    // A revision up to one this replica wrote and handed on is nothing new to the listeners: not decoded.
    const echo = this.#echoes.get(entry.key);
    if (echo !== undefined && echo <= entry.revision) this.#echoes.delete(entry.key);
    if (echo !== undefined && entry.revision <= echo) this.#counted(entry);
    else this.#deliver(entry);
    if (!this.#ready && this.#consumerSeq >= this.#readyAt) this.#markReady();
    if (this.#waiters.length > 0) {
      const due = this.#waiters.filter((waiter) => waiter.consumerSeq <= this.#consumerSeq);
      this.#waiters = this.#waiters.filter((waiter) => waiter.consumerSeq > this.#consumerSeq);
      for (const waiter of due) waiter.resolve();
    }
  }

  /**
   * The ordered consumer was made again (nats.js does so when its heartbeats stop coming, a
   * NATS node's restart, or a gap in its own numbering), from the next revision on: its
   * numbers start at 1. What the watch waits for, counted on the earlier consumer, is
   * counted again on this one, from what the server says is still to come after this
   * message: without it a replica whose consumer was remade while it read its partitions
   * never became ready (it placed nothing and answered no list).
   */
  #countAfresh(entry: FeedEntry): void {
    this.#remade += 1;
    const target = entry.consumerSeq + entry.pending;
    if (!this.#ready) this.#readyAt = target;
    for (const waiter of this.#waiters) waiter.consumerSeq = target;
  }

  #filters(): string[] {
    return [...this.#partitions].flatMap(partitionKeyFilters);
  }

  /** Hands on the revisions `from`..`to` under `filters` still stored; a failed read is logged, never the end of the watch. */
  async #fillGap(from: number, to: number, filters: readonly string[]): Promise<void> {
    try {
      for (const filter of filters) {
        for (const missed of await readStillStored(this.store.jobs.kv, from, to, filter)) {
          const partition = parseJobKey(missed.key)?.partition;
          if (partition === undefined || !this.#partitions.has(partition)) continue;
          jobRepairs.inc({ kind: "watch_skipped" });
          this.logger?.warn(
            { job_key: missed.key, revision: missed.revision },
            "repair: the job watch skipped a job's latest revision; read it from the bucket",
          );
          this.#deliver(missed);
        }
      }
    } catch (error) {
      this.#unread.push({ from, to, filters: [...filters] });
      this.logger?.warn(
        { err: error, from, to },
        "the job watch skipped revisions that could not be read; the repair sweep tries again",
      );
    }
  }

  #deliver(entry: Pick<FeedEntry, "key" | "revision" | "operation" | "value">): void {
    const record = entry.operation === "PUT" ? decodedRecord(entry.value) : null;
    this.#hand({ key: entry.key, revision: entry.revision, record, data: entry.value });
    this.#counted(entry);
  }

  #hand(revision: JobRevision): void {
    for (const listener of this.listeners) listener.apply(revision);
  }

  /** The revision is handed on: the stalled-watch check and `seen` count it. */
  #counted(entry: Pick<FeedEntry, "key" | "revision">): void {
    if (entry.revision > this.#seen) this.#seen = entry.revision;
    const partition = parseJobKey(entry.key)?.partition;
    if (partition !== undefined && entry.revision > (this.#seenOf.get(partition) ?? 0))
      this.#seenOf.set(partition, entry.revision);
  }

  /** The feed delivers in the stream's order: an echo older than the last revision it brought will not come. */
  #forgetPassedEchoes(): void {
    for (const [key, revision] of this.#echoes) if (revision <= this.#lastRevision) this.#echoes.delete(key);
    this.#echoesLimit = Math.max(ECHOES_MIN, 2 * this.#echoes.size);
  }

  /** Whether the watch becomes ready within `limitMs`. */
  #readyWithin(limitMs: number): Promise<boolean> {
    if (this.#ready) return Promise.resolve(true);
    return new Promise((resolve) => {
      const ready = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      // A caller that gave up leaves no waiter behind: lists keep asking while a replay lasts.
      const timer = setTimeout(() => {
        this.#readyWaiters = this.#readyWaiters.filter((waiter) => waiter !== ready);
        resolve(false);
      }, limitMs);
      this.#readyWaiters.push(ready);
    });
  }

  #markReady(): void {
    this.#ready = true;
    for (const resolve of this.#readyWaiters.splice(0)) resolve();
  }
}

/** A record that does not decode to an object is handed on as absent (each listener skips it), never as a crash of the watch. */
function decodedRecord(data: Uint8Array): Record<string, unknown> | null {
  try {
    const value = decodeJson(data);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
