import { AppError } from "../../../shared/errors/index.js";
import type { QueuedJobs } from "./queued-jobs.js";

/**
 * The bound on waiting jobs (`CJS_JOB_QUEUE_MAX_MESSAGES`), over every replica's queue:
 * this replica's (its partitions', from its watch), what the other replicas last reported
 * in their member records (renewed every fifth of a lease), and the submits this replica
 * admitted whose record no watch has counted yet: no read per submit. Replicas admitting
 * at the same instant, or in the time between two reports, may pass the limit by the jobs
 * queued meanwhile.
 */
export class QueueDepthGuard {
  #admitting = 0;

  constructor(
    private readonly queued: Pick<QueuedJobs, "size">,
    private readonly limit: number,
    /** The other replicas' queues, as last reported. */
    private readonly others: () => number = () => 0,
  ) {}

  /** `queue.full` when one more waiting job would pass the limit; null while there is room. */
  refusal(): AppError | null {
    if (this.queued.size + this.others() + this.#admitting + 1 <= this.limit) return null;
    return new AppError("queue.full", "The job queue is full; nothing was queued. Try again later.", {
      retryAfterSeconds: 30,
    });
  }

  /**
   * Runs `write` (the record's create) when one more waiting job stays within the limit;
   * throws `queue.full` otherwise, and nothing is written.
   */
  async admit<T>(write: () => Promise<T>): Promise<T> {
    const full = this.refusal();
    if (full) throw full;
    this.#admitting += 1;
    try {
      return await write();
    } finally {
      this.#admitting -= 1;
    }
  }
}
