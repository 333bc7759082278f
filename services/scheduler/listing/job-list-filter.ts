import { JobState, type ListJobsRequest } from "../../../shared/contract/index.js";
import { type Fields, isOptionalString, isString, isStringMap, isStringOrNull } from "../partitions/record-fields.js";

const STATES: ReadonlySet<string> = new Set(JobState.options);

/** A job as the list filters see it. */
export interface JobListFace {
  state: JobState;
  pool_id: string;
  type: string;
  node_id: string | null;
  /** `created_at` as an instant. */
  created_ms: number;
  labels: Readonly<Record<string, string>>;
  name: string | null;
  metadata: Readonly<Record<string, string>>;
  schedule_id: string | null;
}

const NO_PAIRS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * The face of a stored or decoded job record (the fields the list filters read, the rest
 * dropped unread), or null when it is not one. Every replica reads it for every revision
 * of its partitions: plain checks, no schema.
 */
export function jobListFaceOf(record: unknown): JobListFace | null {
  if (typeof record !== "object" || record === null) return null;
  const { state, pool_id, type, node_id, created_at, labels, name, metadata, schedule_id } = record as Fields;
  if (
    !isString(state) ||
    !STATES.has(state) ||
    !isString(pool_id) ||
    !isString(type) ||
    !isStringOrNull(node_id) ||
    !isString(created_at) ||
    !isStringMap(labels) ||
    !isOptionalString(name) ||
    !(metadata === undefined || isStringMap(metadata)) ||
    !isOptionalString(schedule_id)
  )
    return null;
  const created_ms = Date.parse(created_at);
  if (Number.isNaN(created_ms)) return null;
  return {
    state: state as JobState,
    pool_id,
    type,
    node_id,
    created_ms,
    labels,
    name: name ?? null,
    metadata: metadata ?? NO_PAIRS,
    schedule_id: schedule_id ?? null,
  };
}

/** The filters of a `jobs/list` request, each present one to be met. */
export interface JobListFilter {
  states?: ReadonlySet<JobState>;
  pool_id?: string;
  type?: string;
  node_id?: string;
  labels: ReadonlyArray<readonly [key: string, value: string]>;
  metadata: ReadonlyArray<readonly [key: string, value: string]>;
  name_prefix?: string;
  schedule_id?: string;
  created_after_ms?: number;
  created_before_ms?: number;
}

function asArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** `key=value` split at the first `=`, so a value may hold `=` itself. */
function keyAndValue(pair: string): readonly [key: string, value: string] {
  const at = pair.indexOf("=");
  return [pair.slice(0, at), pair.slice(at + 1)] as const;
}

export function jobListFilterOf(body: Omit<ListJobsRequest, "limit" | "cursor">): JobListFilter {
  return {
    ...(body.state === undefined ? {} : { states: new Set(asArray(body.state)) }),
    ...(body.pool_id === undefined ? {} : { pool_id: body.pool_id }),
    ...(body.type === undefined ? {} : { type: body.type }),
    ...(body.node_id === undefined ? {} : { node_id: body.node_id }),
    labels: asArray(body.label).map(keyAndValue),
    metadata: asArray(body.metadata).map(keyAndValue),
    ...(body.name_prefix === undefined ? {} : { name_prefix: body.name_prefix }),
    ...(body.schedule_id === undefined ? {} : { schedule_id: body.schedule_id }),
    // As instants, not text: `…:54Z` and `…:54.000Z` are the same moment.
    ...(body.created_after === undefined ? {} : { created_after_ms: Date.parse(body.created_after) }),
    ...(body.created_before === undefined ? {} : { created_before_ms: Date.parse(body.created_before) }),
  };
}

/**
 * The rule of the list filters, applied to the record a page read. The index applies the
 * same rule to the codes it keeps (`JobListIndex`): equal names have equal codes, and
 * labels and times are checked by the two functions below.
 */
export function matchesJobListFilter(filter: JobListFilter, job: JobListFace): boolean {
  return (
    (filter.states === undefined || filter.states.has(job.state)) &&
    (filter.pool_id === undefined || job.pool_id === filter.pool_id) &&
    (filter.type === undefined || job.type === filter.type) &&
    (filter.node_id === undefined || job.node_id === filter.node_id) &&
    (filter.schedule_id === undefined || job.schedule_id === filter.schedule_id) &&
    namedWithin(filter, job.name) &&
    createdWithin(filter, job.created_ms) &&
    carriesLabels(filter, job.labels) &&
    carriesMetadata(filter, job.metadata)
  );
}

/** Created strictly after `created_after` and strictly before `created_before`. */
export function createdWithin(filter: JobListFilter, createdMs: number): boolean {
  return (
    !(filter.created_after_ms !== undefined && createdMs <= filter.created_after_ms) &&
    !(filter.created_before_ms !== undefined && createdMs >= filter.created_before_ms)
  );
}

/** A name that starts with `name_prefix`, when the filter has one. */
export function namedWithin(filter: JobListFilter, name: string | null): boolean {
  return filter.name_prefix === undefined || (name !== null && name.startsWith(filter.name_prefix));
}

function carriesPairs(pairs: JobListFilter["labels"], values: Readonly<Record<string, string>>): boolean {
  return pairs.every(([key, value]) => Object.hasOwn(values, key) && values[key] === value);
}

/** Every label `key=value` of the filter carried with that value. */
export function carriesLabels(filter: JobListFilter, labels: Readonly<Record<string, string>>): boolean {
  return carriesPairs(filter.labels, labels);
}

/** Every metadata `key=value` of the filter carried with that value. */
export function carriesMetadata(filter: JobListFilter, metadata: Readonly<Record<string, string>>): boolean {
  return carriesPairs(filter.metadata, metadata);
}
