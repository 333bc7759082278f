import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import { z } from "zod";
import { AppError } from "../../shared/errors/index.js";
import { decodeJson, encodeJson, STREAMS, subjects } from "../../shared/nats/index.js";
import type { LogStore } from "./log-store.js";

/** How many lines of each attempt of a job were dropped past the cap (attempt → lines). */
const DroppedLines = z.object({ attempts: z.record(z.string(), z.number().int().min(0)) });
type DroppedLines = z.infer<typeof DroppedLines>;

const CAS_RETRIES = 20;

/** The job's drop counts and the stream sequence they were read at (0: none stored). */
async function readDropped(store: LogStore, jobId: string): Promise<{ value: DroppedLines; seq: number }> {
  const last = await store.jsm.streams.getMessage(STREAMS.logs, { last_by_subj: subjects.jobLogDrops(jobId) });
  return last
    ? { value: DroppedLines.parse(decodeJson(last.data)), seq: last.seq }
    : { value: { attempts: {} }, seq: 0 };
}

/** Lines dropped past the cap over every attempt of the job. */
export async function totalDropped(store: LogStore, jobId: string): Promise<number> {
  const { value } = await readDropped(store, jobId);
  return Object.values(value.attempts).reduce((sum, count) => sum + count, 0);
}

/**
 * Records that at least `dropped` lines of the attempt were dropped. The count only
 * grows (a resent batch leaves it as it is), and each write is a compare-and-set on the
 * subject's last sequence, so concurrent pushes never lose an update. The counts live
 * in the log stream, so they expire with the lines.
 */
export async function recordDropped(store: LogStore, jobId: string, attempt: number, dropped: number): Promise<void> {
  for (let tryNumber = 0; tryNumber < CAS_RETRIES; tryNumber += 1) {
    const { value, seq } = await readDropped(store, jobId);
    if ((value.attempts[String(attempt)] ?? 0) >= dropped) return;
    const next: DroppedLines = { attempts: { ...value.attempts, [String(attempt)]: dropped } };
    try {
      await store.js.publish(subjects.jobLogDrops(jobId), encodeJson(next), { expect: { lastSubjectSequence: seq } });
      return;
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamWrongLastSequence))
        throw error;
    }
  }
  throw new AppError("service.unavailable", "The log counters are too busy to change right now; try again.", {
    retryAfterSeconds: 1,
  });
}
