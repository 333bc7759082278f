import { AppError } from "../../shared/errors/index.js";
import { BUCKETS, CONSUMERS, kvStreams } from "../../shared/nats/index.js";
import type { Clock } from "../../shared/runtime/index.js";
import type { SchedulerStore } from "./scheduler-store.js";

/** How long a read of the queue's depth is trusted before a submit reads it again. */
const DEPTH_FRESH_MS = 1000;

/**
 * The bound on waiting jobs (`CJS_JOB_QUEUE_MAX_MESSAGES`). The queue is the job records'
 * stream, which has no "refuse when full" of its own, so the depth is the scheduler
 * consumer's backlog (revisions not yet delivered plus those held), read at most once a
 * second and counted up locally in between. Near the limit it is read afresh on every
 * submit. Replicas admitting at the same instant may pass the limit by a few jobs.
 */
export class QueueDepthGuard {
  #depth = 0;
  #readAt = Number.NEGATIVE_INFINITY;
  #reading: Promise<void> | undefined;

  constructor(
    private readonly store: Pick<SchedulerStore, "jsm">,
    private readonly clock: Clock,
    private readonly limit: number,
  ) {}

  /** Throws `queue.full` when one more waiting job would pass the limit; else counts it. */
  async admit(): Promise<void> {
    const stale = this.clock.now() - this.#readAt > DEPTH_FRESH_MS;
    if (stale || this.#depth + 1 > this.limit) await this.read();
    if (this.#depth + 1 > this.limit) {
      throw new AppError("queue.full", "The job queue is full; nothing was queued. Try again later.", { retryAfterSeconds: 30 });
    }
    this.#depth += 1;
  }

  private read(): Promise<void> {
    this.#reading ??= (async () => {
      try {
        const info = await this.store.jsm.consumers.info(kvStreams.name(BUCKETS.jobs), CONSUMERS.scheduler);
        this.#depth = info.num_pending + info.num_ack_pending;
        this.#readAt = this.clock.now();
      } finally {
        this.#reading = undefined;
      }
    })();
    return this.#reading;
  }
}
