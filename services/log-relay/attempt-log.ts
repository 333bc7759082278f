import { decodeJson, STREAMS, subjects } from "../../shared/nats/index.js";
import { readLogMessage, type StoredLogLines } from "../../shared/records/index.js";
import type { LogStore } from "./log-store.js";

/** Where an attempt's stored log stands: what its next message is written against. */
export interface AttemptLog {
  /** Lines the attempt may store (decision 30), lowered to its last line within the byte budget once that is reached. */
  budget: number;
  /** Bytes of line text the attempt may store. */
  byteBudget: number;
  /** Bytes of line text the attempt stored. */
  bytes: number;
  /** The highest `seq` stored, 0 when none. */
  lastSeq: number;
  /** The stream sequence of the attempt's last message, 0 when none: the compare-and-set of its next one. */
  streamSeq: number;
}

/** The last message on an attempt's subject, or null when it has none. */
async function lastMessage(store: LogStore, subject: string): Promise<{ seq: number; stored: StoredLogLines } | null> {
  const last = await store.jsm.streams.getMessage(STREAMS.logs, { last_by_subj: subject });
  if (!last) return null;
  const stored = readLogMessage(decodeJson(last.data));
  if (!stored) throw new Error(`message ${last.seq} of ${STREAMS.logs} (${subject}) is not a log message`);
  return { seq: last.seq, stored };
}

/** A job's caps: lines and bytes of line text, over all its attempts. */
export interface JobLogCaps {
  lines: number;
  bytes: number;
}

/**
 * How many lines and bytes an attempt may store: the job's caps less the `seq` numbers
 * and the bytes its earlier attempts used. Only the latest attempt takes lines, so this is
 * worked out once, by the attempt's first message, which records it for the rest.
 */
async function attemptBudgets(
  store: LogStore,
  caps: JobLogCaps,
  jobId: string,
  attempt: number,
): Promise<{ budget: number; byteBudget: number }> {
  const earlier = await Promise.all(
    Array.from({ length: attempt - 1 }, (_, index) => lastMessage(store, subjects.jobLogs(jobId, index + 1))),
  );
  const lines = earlier.reduce((sum, last) => sum + (last?.stored.lines.at(-1)?.seq ?? 0), 0);
  const bytes = earlier.reduce((sum, last) => sum + (last?.stored.bytes ?? 0), 0);
  return { budget: Math.max(0, caps.lines - lines), byteBudget: Math.max(0, caps.bytes - bytes) };
}

/** Reads where an attempt's log stands from the stream: one read, more only before its first message. */
export async function readAttemptLog(
  store: LogStore,
  caps: JobLogCaps,
  jobId: string,
  attempt: number,
): Promise<AttemptLog> {
  const last = await lastMessage(store, subjects.jobLogs(jobId, attempt));
  const stored = last?.stored;
  // A message stored before messages carried the budgets (one bare line, or no byte budget) has them worked out again.
  const budgets =
    stored?.budget !== undefined && stored.byte_budget !== undefined
      ? { budget: stored.budget, byteBudget: stored.byte_budget }
      : await attemptBudgets(store, caps, jobId, attempt);
  return {
    budget: stored?.budget ?? budgets.budget,
    byteBudget: budgets.byteBudget,
    bytes: stored?.bytes ?? 0,
    lastSeq: stored?.lines.at(-1)?.seq ?? 0,
    streamSeq: last?.seq ?? 0,
  };
}

/**
 * What this replica last read or wrote of recent attempts, so that a push needs no read of
 * the stream. It may be stale (another replica wrote since): each write is a
 * compare-and-set on `streamSeq`, and a refused one drops the entry and reads again.
 * Bounded; the least recently used attempt goes first.
 */
export class AttemptLogCache {
  private readonly entries = new Map<string, AttemptLog>();

  constructor(private readonly maxEntries: number) {}

  get(key: string): AttemptLog | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  set(key: string, entry: AttemptLog): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}
