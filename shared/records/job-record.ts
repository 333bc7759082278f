import { z } from "zod";
import { Job } from "../contract/index.js";

/**
 * A job as stored in the `cjs_jobs` bucket under `jobKey(...)`: the public record plus
 * the internal pool identity. Only the scheduler writes it, always by compare-and-set.
 * Fields it does not name are kept (a newer replica's), so writing a record back never
 * erases them.
 */
export const JobRecord = Job.extend({
  /** The pool the job was submitted to, as written then (`pool-key.ts`); placement reads it through `placementPoolKey`. */
  pool_key: z.string(),
  /** When the current attempt must end (started_at + timeout); null unless running. */
  deadline_at: z.string().nullable(),
  /** Attempts made before the last retry: automatic requeues count from here, so each retry gets `max_attempts` again. */
  attempt_base: z.number().int().default(0),
  /**
   * Whether the job holds one of its API key's `maxConcurrentJobs` places until it ends (set
   * where it is admitted: the submit, each retry). Absent: not known, and the key's quota
   * record is read to find out.
   */
  key_slot: z.boolean().optional(),
  /** The jobs of `depends_on` that have not succeeded yet; the job is held while any is left. */
  waiting_on: z.array(z.string()).default([]),
}).loose();
export type JobRecord = z.infer<typeof JobRecord>;

const PUBLIC_FIELDS = Object.keys(Job.shape) as Array<keyof Job>;

/** The public face of a job record: the fields of `Job`, and nothing the record keeps besides. */
export function publicJob(record: JobRecord): Job {
  return Object.fromEntries(PUBLIC_FIELDS.map((field) => [field, record[field]])) as Job;
}

/**
 * Cheap tests on a stored record's bytes, so a consumer that sees every revision parses
 * only those that can matter to it. Each looks for a key and value as JSON.stringify
 * writes them; inside a string value the quotes would be escaped, so a miss is certain,
 * and a hit (perhaps a user's metadata key) only means "parse it and look".
 */
function bytesInclude(data: Uint8Array, text: string): boolean {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).includes(text);
}

/** False when the record is surely not `queued`: a queued job always carries a pending reason, every other state null. */
export function mayBeQueued(data: Uint8Array): boolean {
  return bytesInclude(data, '"pending_reason":"');
}

/** False when no attempt of the record can be charged: only operator pools are, and only attempts that ran. */
export function mayHaveChargedAttempt(data: Uint8Array): boolean {
  return bytesInclude(data, '"pool_key":"op.') && bytesInclude(data, '"state":"running"');
}
