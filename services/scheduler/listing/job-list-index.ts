import { JobState } from "../../../shared/contract/index.js";
import { jobPartition, parseJobKey } from "../../../shared/records/index.js";
import {
  carriesLabels,
  carriesMetadata,
  createdWithin,
  jobListFaceOf,
  namedWithin,
  type JobListFace,
  type JobListFilter,
} from "./job-list-filter.js";
import type { JobRevision, JobRevisionListener } from "../partitions/job-revision.js";

const STATES = JobState.options;
const STATE_CODES = new Map<JobState, number>(STATES.map((state, code) => [state, code]));
/** Code 0 of an interned value: no value (a job without a node). */
const NONE = 0;
/**
 * An insert this far from the newest position leaves the order to be sorted at the next
 * read, rather than shifted now: ids sort by creation time, so a live insert lands at or
 * near the end; only a watch replaying old records inserts far back, many times over.
 */
const FAR_INSERT = 4096;
const EMPTY_PAIRS: Readonly<Record<string, string>> = Object.freeze({});
const same = (name: string): string => name;

/** Values shared by many jobs (pools, types, nodes, schedules, label and metadata sets), each kept once under a small number while a job uses it. */
class Interned<T> {
  readonly #codes = new Map<string, number>();
  readonly #values: Array<T | undefined> = [undefined];
  readonly #names: string[] = [""];
  readonly #uses: number[] = [0];
  readonly #free: number[] = [];

  /** The code of `name` (its value made by `make` the first time), counted as one more use. */
  acquire(name: string, make: (name: string) => T): number {
    let code = this.#codes.get(name);
    if (code === undefined) {
      code = this.#free.pop() ?? this.#values.length;
      const own = ownCopy(name);
      this.#codes.set(own, code);
      this.#names[code] = own;
      this.#values[code] = make(own);
      this.#uses[code] = 0;
    }
    this.#uses[code] = (this.#uses[code] ?? 0) + 1;
    return code;
  }

  release(code: number): void {
    if (code === NONE) return;
    const uses = (this.#uses[code] ?? 1) - 1;
    this.#uses[code] = uses;
    if (uses > 0) return;
    this.#codes.delete(this.#names[code] as string);
    this.#names[code] = "";
    this.#values[code] = undefined;
    this.#free.push(code);
  }

  /** The code of `name` if some job uses it. */
  codeOf(name: string): number | undefined {
    return this.#codes.get(name);
  }

  value(code: number): T {
    return this.#values[code] as T;
  }
}

/**
 * A copy of a string that holds only its own characters. A key from the watch is a slice
 * of the message's subject, and a slice of it would keep that whole string alive for as
 * long as the index keeps the job.
 */
function ownCopy(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

/** The same pairs (labels or metadata) always give the same name, whatever their order. */
function pairSetName(pairs: Readonly<Record<string, string>>): string {
  const keys = Object.keys(pairs);
  if (keys.length === 0) return "";
  keys.sort();
  return JSON.stringify(keys.map((key) => [key, pairs[key]]));
}

/** The code of a set of pairs, NONE for an empty one. */
function acquirePairs(
  pairSets: Interned<Readonly<Record<string, string>>>,
  pairs: Readonly<Record<string, string>>,
): number {
  const name = pairSetName(pairs);
  return name === "" ? NONE : pairSets.acquire(name, () => Object.freeze({ ...pairs }));
}

interface Shared {
  names: Interned<string>;
  /** Label sets and metadata sets: one kind of value, so equal sets share a code. */
  pairSets: Interned<Readonly<Record<string, string>>>;
}

/** A filter in the index's terms: a bit per state, the codes of the names, and whether each label set passes. */
interface CodedFilter {
  filter: JobListFilter;
  states: number;
  pool: number | undefined;
  type: number | undefined;
  node: number | undefined;
  schedule: number | undefined;
  labelSet(code: number): boolean;
  metadataSet(code: number): boolean;
}

/**
 * One business's jobs: a row per job in typed columns (interned codes, not strings), and
 * `order`, the rows by id. Rows are appended as jobs appear and a removed row takes the
 * last row's place, so only `order` is ever shifted.
 */
class BusinessJobs {
  #count = 0;
  #ids: string[] = [];
  readonly #rowOf = new Map<string, number>();
  #order = new Int32Array(16);
  /** False after an insert far back: `order` is sorted again before it is next read. */
  #sorted = true;
  #revision = new Float64Array(16);
  #created = new Float64Array(16);
  #state = new Uint8Array(16);
  #pool = new Uint32Array(16);
  #type = new Uint32Array(16);
  #node = new Uint32Array(16);
  #labels = new Uint32Array(16);
  #metadata = new Uint32Array(16);
  #schedule = new Uint32Array(16);
  /** Names are mostly each job's own: kept as strings, not interned. */
  #names: Array<string | null> = [];

  constructor(private readonly shared: Shared) {}

  get size(): number {
    return this.#count;
  }

  put(id: string, revision: number, job: JobListFace): void {
    let row = this.#rowOf.get(id);
    if (row !== undefined) {
      if (this.#revision[row]! >= revision) return;
      this.#release(row);
    } else {
      row = this.#append(ownCopy(id));
    }
    const { names, pairSets } = this.shared;
    this.#revision[row] = revision;
    this.#created[row] = job.created_ms;
    this.#state[row] = STATE_CODES.get(job.state)!;
    this.#pool[row] = names.acquire(job.pool_id, same);
    this.#type[row] = names.acquire(job.type, same);
    this.#node[row] = job.node_id === null ? NONE : names.acquire(job.node_id, same);
    this.#schedule[row] = job.schedule_id === null ? NONE : names.acquire(job.schedule_id, same);
    this.#labels[row] = acquirePairs(pairSets, job.labels);
    this.#metadata[row] = acquirePairs(pairSets, job.metadata);
    this.#names[row] = job.name === null ? null : ownCopy(job.name);
  }

  remove(id: string, revision: number): void {
    const row = this.#rowOf.get(id);
    if (row === undefined || this.#revision[row]! >= revision) return;
    this.#release(row);
    const last = this.#count - 1;
    if (this.#sorted) {
      const at = this.#position(id);
      this.#order.copyWithin(at, at + 1, this.#count);
      if (row !== last) this.#order[this.#position(this.#ids[last]!, last)] = row;
    }
    if (row !== last) this.#moveRow(last, row);
    this.#rowOf.delete(id);
    this.#ids.length = last;
    this.#names.length = last;
    this.#count = last;
  }

  /** Removes every job whose id passes `drop`. */
  removeWhere(drop: (id: string) => boolean): void {
    for (const id of this.#ids.filter(drop)) this.remove(id, Number.POSITIVE_INFINITY);
  }

  /**
   * Up to `count` ids of jobs that match `filter` and sort before `before` (all jobs when
   * it is absent), newest first; `more` says whether another match follows the last.
   */
  find(filter: CodedFilter, before: string | undefined, count: number): { ids: string[]; more: boolean } {
    this.#sort();
    const ids: string[] = [];
    for (let at = (before === undefined ? this.#count : this.#position(before)) - 1; at >= 0; at -= 1) {
      const row = this.#order[at]!;
      if (!this.#matches(filter, row)) continue;
      if (ids.length === count) return { ids, more: true };
      ids.push(this.#ids[row]!);
    }
    return { ids, more: false };
  }

  #matches(filter: CodedFilter, row: number): boolean {
    return (
      (filter.states & (1 << this.#state[row]!)) !== 0 &&
      (filter.pool === undefined || this.#pool[row] === filter.pool) &&
      (filter.type === undefined || this.#type[row] === filter.type) &&
      (filter.node === undefined || this.#node[row] === filter.node) &&
      (filter.schedule === undefined || this.#schedule[row] === filter.schedule) &&
      createdWithin(filter.filter, this.#created[row]!) &&
      (filter.filter.labels.length === 0 || filter.labelSet(this.#labels[row]!)) &&
      (filter.filter.metadata.length === 0 || filter.metadataSet(this.#metadata[row]!)) &&
      namedWithin(filter.filter, this.#names[row]!)
    );
  }

  #append(id: string): number {
    const row = this.#count;
    if (row === this.#order.length) this.#grow();
    this.#count += 1;
    this.#ids.push(id);
    this.#names.push(null);
    this.#rowOf.set(id, row);
    if (this.#sorted && row > 0 && id < this.#ids[this.#order[row - 1]!]!) {
      const at = this.#position(id, row);
      if (row - at <= FAR_INSERT) {
        this.#order.copyWithin(at + 1, at, row);
        this.#order[at] = row;
        return row;
      }
      this.#sorted = false;
    }
    this.#order[row] = row;
    return row;
  }

  /** The first position in `order` (of its first `length`) whose id is not below `id`. */
  #position(id: string, length = this.#count): number {
    let low = 0;
    let high = length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#ids[this.#order[middle]!]! < id) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  #sort(): void {
    if (this.#sorted) return;
    const order = this.#order.subarray(0, this.#count);
    for (let row = 0; row < order.length; row += 1) order[row] = row;
    const ids = this.#ids;
    order.sort((a, b) => (ids[a]! < ids[b]! ? -1 : 1));
    this.#sorted = true;
  }

  #release(row: number): void {
    const { names, pairSets } = this.shared;
    names.release(this.#pool[row]!);
    names.release(this.#type[row]!);
    names.release(this.#node[row]!);
    names.release(this.#schedule[row]!);
    pairSets.release(this.#labels[row]!);
    pairSets.release(this.#metadata[row]!);
  }

  #moveRow(from: number, to: number): void {
    const id = this.#ids[from]!;
    this.#ids[to] = id;
    this.#rowOf.set(id, to);
    this.#revision[to] = this.#revision[from]!;
    this.#created[to] = this.#created[from]!;
    this.#state[to] = this.#state[from]!;
    this.#pool[to] = this.#pool[from]!;
    this.#type[to] = this.#type[from]!;
    this.#node[to] = this.#node[from]!;
    this.#labels[to] = this.#labels[from]!;
    this.#metadata[to] = this.#metadata[from]!;
    this.#schedule[to] = this.#schedule[from]!;
    this.#names[to] = this.#names[from]!;
  }

  #grow(): void {
    const size = this.#order.length * 2;
    const grown = <A extends Int32Array | Float64Array | Uint8Array | Uint32Array>(
      from: A,
      make: new (length: number) => A,
    ): A => {
      const to = new make(size);
      to.set(from);
      return to;
    };
    this.#order = grown(this.#order, Int32Array);
    this.#revision = grown(this.#revision, Float64Array);
    this.#created = grown(this.#created, Float64Array);
    this.#state = grown(this.#state, Uint8Array);
    this.#pool = grown(this.#pool, Uint32Array);
    this.#type = grown(this.#type, Uint32Array);
    this.#node = grown(this.#node, Uint32Array);
    this.#labels = grown(this.#labels, Uint32Array);
    this.#metadata = grown(this.#metadata, Uint32Array);
    this.#schedule = grown(this.#schedule, Uint32Array);
  }
}

/**
 * Every business's jobs, ordered by id, with just what the list filters read: this
 * replica's picture from its watch of the job bucket. `jobs/list` filters, pages and
 * orders here, then reads only the page's records. About 140 bytes a job, plus its name
 * and its metadata set (shared by jobs with equal metadata); nothing of a record's
 * command, env or timeline is kept.
 */
export class JobListIndex implements JobRevisionListener {
  readonly #businesses = new Map<string, BusinessJobs>();
  readonly #shared: Shared = { names: new Interned(), pairSets: new Interned() };

  apply({ key, revision, record }: JobRevision): void {
    const parts = parseJobKey(key);
    if (!parts) return;
    const business = `${parts.app_id}.${parts.business_id}`;
    const id = parts.job_id;
    const job = record ? jobListFaceOf(record) : null;
    const jobs = this.#businesses.get(business);
    if (job) {
      if (jobs) jobs.put(id, revision, job);
      else {
        const created = new BusinessJobs(this.#shared);
        created.put(id, revision, job);
        this.#businesses.set(ownCopy(business), created);
      }
    } else if (jobs) {
      jobs.remove(id, revision);
      if (jobs.size === 0) this.#businesses.delete(business);
    }
  }

  dropPartition(partition: number): void {
    for (const [business, jobs] of [...this.#businesses]) {
      jobs.removeWhere((id) => jobPartition(id) === partition);
      if (jobs.size === 0) this.#businesses.delete(business);
    }
  }

  /**
   * Up to `count` ids of the business's jobs that match `filter` and sort before `before`
   * (from the newest when absent), newest first; `more` says whether another match follows.
   * Another business's jobs are in another part of the index, never looked at.
   */
  find(
    appId: string,
    businessId: string,
    filter: JobListFilter,
    before: string | undefined,
    count: number,
  ): { ids: string[]; more: boolean } {
    const jobs = this.#businesses.get(`${appId}.${businessId}`);
    const coded = jobs && this.#coded(filter);
    return coded ? jobs.find(coded, before, count) : { ids: [], more: false };
  }

  /** Jobs indexed for the business. */
  size(appId: string, businessId: string): number {
    return this.#businesses.get(`${appId}.${businessId}`)?.size ?? 0;
  }

  /** The filter as codes; undefined when it names a pool, type or node no job has, so nothing can match. */
  #coded(filter: JobListFilter): CodedFilter | undefined {
    const { names, pairSets } = this.#shared;
    const codeOf = (name: string | undefined) => (name === undefined ? undefined : (names.codeOf(name) ?? -1));
    const [pool, type, node, schedule] = [
      codeOf(filter.pool_id),
      codeOf(filter.type),
      codeOf(filter.node_id),
      codeOf(filter.schedule_id),
    ];
    if (pool === -1 || type === -1 || node === -1 || schedule === -1) return undefined;
    let states = 0;
    STATES.forEach((state, code) => {
      if (!filter.states || filter.states.has(state)) states |= 1 << code;
    });
    const pairsOf = (code: number) => (code === NONE ? EMPTY_PAIRS : pairSets.value(code));
    const labelPasses: Array<boolean | undefined> = [];
    const metadataPasses: Array<boolean | undefined> = [];
    const labelSet = (code: number): boolean => (labelPasses[code] ??= carriesLabels(filter, pairsOf(code)));
    const metadataSet = (code: number): boolean => (metadataPasses[code] ??= carriesMetadata(filter, pairsOf(code)));
    return { filter, states, pool, type, node, schedule, labelSet, metadataSet };
  }
}
