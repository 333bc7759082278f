import { type JobRecord, mayBeQueued, parseJobKey, placementPoolKey } from "../../../shared/records/index.js";
import type { JobRevision, JobRevisionListener } from "../partitions/job-revision.js";
import {
  concurrencyOf,
  type Fields,
  isNumber,
  isOptionalString,
  isString,
  isStringArray,
  isStringMap,
  resourcesOf,
} from "../partitions/record-fields.js";
import { concurrencyGate } from "./concurrency-keys.js";
import { heldReason } from "./job-holds.js";
import type { PendingJob } from "./pending-job.js";

/** The fields of a queued job record that placement needs; null for any other record. */
function queuedFaceOf(record: Fields) {
  if (record.state !== "queued") return null;
  const { attempt, app_id, business_id, pool_id, pool_key, type, labels, priority, queued_at } = record;
  const { next_attempt_at, waiting_on, pending_reason } = record;
  const resources = resourcesOf(record.resources);
  const concurrency = concurrencyOf(record.concurrency);
  if (
    !isNumber(attempt) ||
    !isString(app_id) ||
    !isString(business_id) ||
    !isString(pool_id) ||
    !isString(pool_key) ||
    !isString(type) ||
    !isStringMap(labels) ||
    !resources ||
    !isNumber(priority) ||
    !isString(queued_at) ||
    !isOptionalString(next_attempt_at) ||
    !(waiting_on === undefined || isStringArray(waiting_on)) ||
    !isOptionalString(pending_reason) ||
    concurrency === undefined
  )
    return null;
  return {
    attempt,
    app_id,
    business_id,
    pool_id,
    pool_key,
    type,
    labels,
    resources,
    priority,
    queued_at,
    next_attempt_at,
    waiting_on,
    pending_reason,
    concurrency,
  };
}

/** How many bytes of queued records the queue keeps for assignments (past it, a placement reads the record). */
const RECORD_BYTES_MAX = 64 * 1024 * 1024;
/**
 * How many queued records this replica wrote itself the queue keeps as written, beside
 * their bytes: an assignment starts from such a record with no decode and no check. Bounded
 * because an object costs several times its bytes; the first kept are the first placed.
 */
const WRITTEN_RECORDS_MAX = 5_000;

/** A queued record kept for its assignment: its bytes, and the record itself when this replica wrote it. */
interface QueuedRecord {
  revision: number;
  data: Uint8Array;
  written?: JobRecord;
}

/** A queued job as the index keeps it. */
export interface QueuedJob extends PendingJob {
  /** The revision that queued it: the compare-and-set of the assignment checks the record is still there. */
  revision: number;
  /** The record's attempt while queued; the assignment makes it attempt + 1. */
  attempt: number;
  /** Jobs with the same fit (type, labels, resources) find the same nodes, so a round tries each fit once when nothing has room. */
  fit: string;
}

/** Queued jobs of one concurrency key (or of none), in the order they were queued (a Map keeps insertion order). */
interface KeyQueue {
  /** The key's scope (`ConcurrencyGate.scope`), "" for the jobs without a key. */
  scope: string;
  jobs: Map<string, QueuedJob>;
  /** When a job of this key was last given a place (a count of places given): the keys of a business take turns. */
  servedAt: number;
}

/** One business's queued jobs of one pool and priority: per concurrency key, jobs without one forming their own group (""). */
type BusinessQueue = Map<string, KeyQueue>;

/** priority → business → its queue. */
type PoolQueue = Map<number, Map<string, BusinessQueue>>;

/**
 * Every queued job, kept by every replica from its watch of the job bucket, ordered for
 * placement without a sort per round: per pool, per priority, per business, per
 * concurrency key, in the order the jobs were queued (the order of the bucket's stream).
 * The whole backlog is here, so priority and the businesses' turns apply across all of
 * it, not across a window.
 */
export class QueuedJobs implements JobRevisionListener {
  readonly #byKey = new Map<string, QueuedJob>();
  readonly #pools = new Map<string, PoolQueue>();
  /** When each business was last given a place, per pool (a count of places given): the turns go on from round to round. */
  readonly #servedAt = new Map<string, Map<string, number>>();
  #places = 0;
  readonly #shared = new SharedValues();
  /** Queued jobs whose `run_at` or backoff is still ahead, by the time they may be placed: outside the pools until then. */
  readonly #later = new Map<string, QueuedJob & { dueMs: number }>();
  /**
   * No job of `#later` is due before this (it may be earlier than the earliest still there,
   * after one left the queue): a placement round looks through `#later` only once it passes.
   */
  #laterFrom = Number.POSITIVE_INFINITY;

  /**
   * The bytes of queued records as the watch brought them, so an assignment starts from
   * them instead of a read; bounded (`RECORD_BYTES_MAX`): past it, a job's record is read.
   */
  readonly #records = new Map<string, QueuedRecord>();
  #recordBytes = 0;
  #writtenRecords = 0;
  /**
   * Jobs whose placement is being written now (a round's, or a node's next job taken with
   * its result): planning skips them, so two placements of this replica never race for one
   * job (the loser cost a refused compare-and-set, a read and a released reservation).
   */
  readonly #placing = new Set<string>();

  /**
   * `onQueued` is told of each job that joins the queue (a placement round is due).
   * `sharedPools` are the operator pools shared across applications: a job's pool is read through `placementPoolKey`.
   */
  constructor(
    private readonly onQueued: () => void = () => undefined,
    private readonly sharedPools: readonly string[] = [],
    private readonly now: () => number = Date.now,
  ) {}

  /** Every queued job this replica knows: those placement may take and those waiting for their time. */
  get size(): number {
    return this.#byKey.size + this.#later.size;
  }

  get(jobKey: string): QueuedJob | undefined {
    return this.#byKey.get(jobKey);
  }

  /** Marks the job as being placed; false when another placement of this replica holds it already. */
  startPlacing(jobKey: string): boolean {
    if (this.#placing.has(jobKey)) return false;
    this.#placing.add(jobKey);
    return true;
  }

  /** The job's placement ended (landed or not). */
  endPlacing(jobKey: string): void {
    this.#placing.delete(jobKey);
  }

  /** Whether a placement of this replica is writing the job now (the planner leaves it out). */
  isPlacing(jobKey: string): boolean {
    return this.#placing.has(jobKey);
  }

  /** The record at the queued revision, when kept: its bytes (a copy: the watch's message buffer is not held), and the record as written when this replica wrote it. */
  recordOf(jobKey: string, revision: number): Omit<QueuedRecord, "revision"> | undefined {
    const kept = this.#records.get(jobKey);
    return kept?.revision === revision ? kept : undefined;
  }

  #keepRecord(jobKey: string, { revision, data, record, own }: JobRevision): void {
    this.#forgetRecord(jobKey);
    if (data.byteLength === 0 || this.#recordBytes + data.byteLength > RECORD_BYTES_MAX) return;
    const written = own && this.#writtenRecords < WRITTEN_RECORDS_MAX ? (record as unknown as JobRecord) : undefined;
    this.#records.set(jobKey, { revision, data: data.slice(), ...(written ? { written } : {}) });
    this.#recordBytes += data.byteLength;
    if (written) this.#writtenRecords += 1;
  }

  #forgetRecord(jobKey: string): void {
    const kept = this.#records.get(jobKey);
    if (!kept) return;
    this.#records.delete(jobKey);
    this.#recordBytes -= kept.data.byteLength;
    if (kept.written) this.#writtenRecords -= 1;
  }

  /** Every queued job placement may take now, in no particular order. */
  jobs(): IterableIterator<QueuedJob> {
    return this.#byKey.values();
  }

  /** The earliest time a job waiting for its `run_at` or backoff may be placed; null when none waits. */
  nextDueAt(): number | null {
    return this.#later.size === 0 ? null : this.#laterFrom;
  }

  /** Moves the jobs whose time has come into the pools; how many moved. Reads the waiting jobs only when one may be due. */
  releaseDue(now: number): number {
    if (now < this.#laterFrom) return 0;
    let moved = 0;
    let next = Number.POSITIVE_INFINITY;
    for (const [key, job] of this.#later) {
      if (job.dueMs > now) {
        next = Math.min(next, job.dueMs);
        continue;
      }
      this.#later.delete(key);
      const { dueMs: _due, ...placeable } = job;
      this.add(placeable, undefined);
      moved += 1;
    }
    this.#laterFrom = next;
    return moved;
  }

  pools(): Iterable<string> {
    return this.#pools.keys();
  }

  /** Whether some job of the pool (its placement pool key) waits to be placed; those waiting for their time do not count. */
  waitsIn(poolKey: string): boolean {
    return this.#pools.has(poolKey);
  }

  apply(change: JobRevision): void {
    const { key, revision, record, data } = change;
    const known = this.#byKey.get(key);
    const seen = known ?? this.#later.get(key);
    if (seen && seen.revision >= revision) return;
    // Most revisions are of jobs that left the queue: two byte searches instead of a parse.
    const face = record && mayBeQueued(data) ? queuedFaceOf(record) : null;
    if (!face) {
      this.remove(key, revision);
      return;
    }
    const { attempt, business_id, type, labels, resources, priority, queued_at } = face;
    const hold = heldReason(face, this.now());
    const pool_key = placementPoolKey(face, this.sharedPools);
    // Most jobs share their business, pool, type, labels and resources with many others: one copy each.
    const fit = this.#shared.text(fitOf(type, labels, resources));
    const job: QueuedJob = {
      job_key: key,
      revision,
      attempt,
      business_id: this.#shared.text(business_id),
      pool_key: this.#shared.text(pool_key),
      type: this.#shared.text(type),
      labels: this.#shared.value(`l:${fit}`, labels),
      resources: this.#shared.value(`r:${fit}`, resources),
      priority,
      queued_at_ms: Date.parse(queued_at),
      fit,
      concurrency: concurrencyGate(face),
    };
    if (hold !== null) {
      // Dependencies: a later revision (one succeeded) brings it back. Time: kept aside until it is due.
      this.remove(key, revision);
      if (hold !== "waiting_for_dependencies") this.#keepRecord(key, change);
      if (hold !== "waiting_for_dependencies") {
        const dueMs = Date.parse(face.next_attempt_at as string);
        this.#later.set(key, { ...job, dueMs });
        this.#laterFrom = Math.min(this.#laterFrom, dueMs);
      }
      this.onQueued();
      return;
    }
    this.#later.delete(key);
    this.add(job, known);
    this.#keepRecord(key, change);
    this.onQueued();
  }

  dropPartition(partition: number): void {
    for (const key of [...this.#byKey.keys(), ...this.#later.keys()])
      if (parseJobKey(key)?.partition === partition) this.remove(key);
  }

  /**
   * Takes a job out once it left the queue at or after `revision` (this replica assigned
   * it, or the watch brought a later revision). A newer queued revision stays.
   */
  remove(jobKey: string, revision: number = Number.POSITIVE_INFINITY): void {
    const kept = this.#records.get(jobKey);
    if (kept && kept.revision <= revision) this.#forgetRecord(jobKey);
    const waiting = this.#later.get(jobKey);
    if (waiting && waiting.revision <= revision) this.#later.delete(jobKey);
    const known = this.#byKey.get(jobKey);
    if (!known || known.revision > revision) return;
    this.#byKey.delete(jobKey);
    const byBusiness = this.#pools.get(known.pool_key)?.get(known.priority);
    const queue = byBusiness?.get(known.business_id);
    const group = groupOf(known);
    const keyQueue = queue?.get(group);
    keyQueue?.jobs.delete(jobKey);
    if (keyQueue?.jobs.size === 0) queue?.delete(group);
    if (queue?.size === 0) {
      byBusiness?.delete(known.business_id);
      // A business with nothing left waiting in the pool starts afresh when it queues again.
      if (
        ![...(this.#pools.get(known.pool_key)?.values() ?? [])].some((businesses) => businesses.has(known.business_id))
      )
        this.#servedAt.get(known.pool_key)?.delete(known.business_id);
    }
    if (byBusiness?.size === 0) this.#pools.get(known.pool_key)?.delete(known.priority);
    if (this.#pools.get(known.pool_key)?.size === 0) this.#pools.delete(known.pool_key);
  }

  /**
   * A pool's queued jobs in the order placement considers them: higher priority first;
   * within a priority, businesses take turns, the one given a place least recently first
   * (then the one with the oldest waiting job), each business's jobs first come, first
   * served; within a business, its concurrency keys (jobs without one as one more) take
   * turns the same way. The turns carry over from one round to the next, so when one slot
   * frees at a time a business with one job is next after one with 50,000, not after all
   * of them.
   * Lazy: a round that fills the pool after ten jobs reads ten, however long the backlog.
   * A key the caller puts in `closedKeys` yields no more jobs from then on (its waiting
   * jobs are not read one by one when the key is at its limit).
   */
  *inOrder(poolKey: string, closedKeys: ReadonlySet<string> = NO_KEYS): Generator<QueuedJob> {
    const pool = this.#pools.get(poolKey);
    if (!pool) return;
    const servedAt = this.#servedAt.get(poolKey);
    for (const priority of [...pool.keys()].sort((a, b) => b - a)) {
      yield* takeTurns(
        [...(pool.get(priority)?.entries() ?? [])].map(([business, queue]) => ({
          ...businessTurns(queue, closedKeys),
          servedAt: servedAt?.get(business) ?? 0,
        })),
      );
    }
  }

  /** The plan gave this job a place: its business's next turn comes after the others'. */
  markServed(job: Pick<PendingJob, "pool_key" | "business_id" | "priority" | "concurrency">): void {
    let servedAt = this.#servedAt.get(job.pool_key);
    if (!servedAt) this.#servedAt.set(job.pool_key, (servedAt = new Map()));
    this.#places += 1;
    servedAt.set(job.business_id, this.#places);
    const keyQueue = this.#pools.get(job.pool_key)?.get(job.priority)?.get(job.business_id)?.get(groupOf(job));
    if (keyQueue) keyQueue.servedAt = this.#places;
  }

  /** An index of a plain list of jobs (tests, and `fairOrder`), queued in `queued_at_ms` order. */
  static fromList(jobs: readonly PendingJob[]): QueuedJobs {
    const index = new QueuedJobs();
    [...jobs]
      .sort((a, b) => a.queued_at_ms - b.queued_at_ms)
      .forEach((job, position) =>
        index.add(
          { ...job, revision: position + 1, attempt: 0, fit: fitOf(job.type, job.labels, job.resources) },
          undefined,
        ),
      );
    return index;
  }

  private add(job: QueuedJob, known: QueuedJob | undefined): void {
    // A job requeued, or queued again under another priority or pool, goes to the back of its new queue.
    if (
      known &&
      (known.pool_key !== job.pool_key || known.priority !== job.priority || known.queued_at_ms !== job.queued_at_ms)
    )
      this.remove(job.job_key);
    this.#byKey.set(job.job_key, job);
    let pool = this.#pools.get(job.pool_key);
    if (!pool) this.#pools.set(job.pool_key, (pool = new Map()));
    let byBusiness = pool.get(job.priority);
    if (!byBusiness) pool.set(job.priority, (byBusiness = new Map()));
    let queue = byBusiness.get(job.business_id);
    if (!queue) byBusiness.set(job.business_id, (queue = new Map()));
    const group = groupOf(job);
    let keyQueue = queue.get(group);
    if (!keyQueue) queue.set(group, (keyQueue = { scope: group, jobs: new Map(), servedAt: 0 }));
    // Setting a key already present keeps its place in the queue.
    keyQueue.jobs.set(job.job_key, job);
  }
}

/**
 * One copy of each text and value many queued jobs share, so a backlog of 100,000 jobs
 * costs about one key and a few numbers each. The table starts afresh past 10,000
 * entries, so values no job uses any more do not pile up.
 */
class SharedValues {
  #texts = new Map<string, string>();
  #values = new Map<string, unknown>();
  #limit = 10_000;

  text(value: string): string {
    const known = this.#texts.get(value);
    if (known !== undefined) return known;
    this.grow();
    this.#texts.set(value, value);
    return value;
  }

  value<T>(key: string, value: T): T {
    const known = this.#values.get(key);
    if (known !== undefined) return known as T;
    this.grow();
    this.#values.set(key, value);
    return value;
  }

  private grow(): void {
    if (this.#texts.size + this.#values.size < this.#limit) return;
    // Jobs hold their copies; clearing only stops sharing with jobs queued before.
    this.#texts = new Map();
    this.#values = new Map();
  }
}

/** The group of a job in its business's queue: its concurrency key's scope, or "" without one. */
function groupOf(job: Pick<PendingJob, "concurrency">): string {
  return job.concurrency?.scope ?? "";
}

/** A queue taking its turn: when it was last served, its oldest job's time, and its jobs in order. */
interface Turn<T> {
  servedAt: number;
  oldest: number;
  jobs: Iterator<T>;
}

function keyTurn(queue: KeyQueue, closedKeys: ReadonlySet<string>): Turn<QueuedJob> {
  return {
    servedAt: queue.servedAt,
    oldest: queue.jobs.values().next().value?.queued_at_ms ?? Infinity,
    jobs: queue.scope === "" ? queue.jobs.values() : whileOpen(queue, closedKeys),
  };
}

/** A key's jobs in order, until the key is closed. */
function* whileOpen(queue: KeyQueue, closedKeys: ReadonlySet<string>): Generator<QueuedJob> {
  for (const job of queue.jobs.values()) {
    if (closedKeys.has(queue.scope)) return;
    yield job;
  }
}

const NO_KEYS: ReadonlySet<string> = new Set();

/** A business's jobs in order: its one group's as they are (most businesses), else its concurrency keys taking turns. */
function businessTurns(
  queue: BusinessQueue,
  closedKeys: ReadonlySet<string>,
): Pick<Turn<QueuedJob>, "oldest" | "jobs"> {
  if (queue.size === 1) return keyTurn(queue.values().next().value as KeyQueue, closedKeys);
  const groups = [...queue.values()].map((group) => keyTurn(group, closedKeys));
  return { oldest: Math.min(...groups.map((group) => group.oldest)), jobs: takeTurns(groups) };
}

/** Round-robin over queues: the one given a place least recently first, then the one with the oldest waiting job. */
function* takeTurns<T>(queues: Array<Turn<T>>): Generator<T> {
  const heads = [...queues].sort((a, b) => a.servedAt - b.servedAt || a.oldest - b.oldest);
  let turns = heads.map((head) => head.jobs);
  while (turns.length > 0) {
    const next: typeof turns = [];
    for (const jobs of turns) {
      const step = jobs.next();
      if (step.done) continue;
      yield step.value;
      next.push(jobs);
    }
    turns = next;
  }
}

/** The same fit means the same candidate nodes: the job's type, labels and resources. */
function fitOf(type: string, labels: Record<string, string>, resources: PendingJob["resources"]): string {
  const labelText = Object.keys(labels)
    .sort()
    .map((name) => `${name}=${labels[name]}`)
    .join(",");
  return `${type}|${labelText}|${resources.cpu}|${resources.memory_mb}|${resources.gpu}`;
}

/** The fair order of a plain list of jobs, pool by pool: the order `QueuedJobs.inOrder` gives. */
export function fairOrder(jobs: readonly PendingJob[]): PendingJob[] {
  const index = QueuedJobs.fromList(jobs);
  const byKey = new Map(jobs.map((job) => [job.job_key, job]));
  return [...index.pools()].flatMap((poolKey) =>
    [...index.inOrder(poolKey)].map((job) => byKey.get(job.job_key) as PendingJob),
  );
}
