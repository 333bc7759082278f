import { JetStreamApiError, type JetStreamClient } from "@nats-io/jetstream";
import { z } from "zod";
import { AppError } from "../../shared/errors/index.js";
import { encodeJson, subjects } from "../../shared/nats/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";
import type { JobRecord } from "../../shared/records/index.js";

/** One message per queueing of a job: the record it refers to and the attempt it was at. */
export const QueueMessage = z.object({ job_key: z.string(), attempt: z.number().int() });
export type QueueMessage = z.infer<typeof QueueMessage>;

const PUBLISH_TRIES = 3;

/**
 * Puts a job on the queue. A publish whose answer was lost is retried under the same
 * message id, so the stream's duplicate window drops the copy; each call uses a new id,
 * so a requeue that is done again always gets a message (extra copies are harmless: the
 * consumer and the compare-and-set on the record let only one place the job). Called
 * before the record is written as queued, so a queued record always has its message.
 */
export async function enqueue(js: JetStreamClient, job: Pick<JobRecord, "app_id" | "business_id" | "job_id" | "pool_key" | "attempt">, jobKey: string): Promise<void> {
  const message: QueueMessage = { job_key: jobKey, attempt: job.attempt };
  const msgID = `${jobKey}:${job.attempt}:${randomBase62(8)}`;
  let lastError: unknown;
  for (let tryNumber = 1; tryNumber <= PUBLISH_TRIES; tryNumber += 1) {
    try {
      await js.publish(subjects.jobQueue(job.pool_key), encodeJson(message), { msgID, timeout: 5000 });
      return;
    } catch (error) {
      // A full stream (discard new) answers at once: nothing was stored, and retrying now will not help.
      if (error instanceof JetStreamApiError && /maximum messages|resource limits exceeded/i.test(error.message)) {
        throw new AppError("queue.full", "The job queue is full; nothing was queued. Try again later.", { retryAfterSeconds: 30 });
      }
      lastError = error;
    }
  }
  throw new AppError("service.unavailable", "The job queue did not confirm the job; nothing is lost, try again.", { retryAfterSeconds: 1, cause: lastError });
}
