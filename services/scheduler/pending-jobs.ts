import type { JsMsg } from "@nats-io/jetstream";
import type { PendingReason } from "../../shared/contract/index.js";
import type { PendingJob } from "./plan.js";
import { queueDepth } from "./scheduler-metrics.js";

/** A queued job this replica took from the queue and holds (unacknowledged) until it is placed. */
export interface HeldJob {
  msg: JsMsg;
  job: PendingJob;
  /** The record's attempt when queued; the assignment makes it attempt + 1. */
  attempt: number;
  /** The last pending reason written to the record, so an unchanged reason costs no write. */
  reason: PendingReason | null;
}

/**
 * The jobs this replica holds. Their messages stay unacknowledged, kept alive with
 * `working()`: if this replica dies, the queue hands them to another replica.
 */
export class PendingJobs {
  private readonly held = new Map<string, HeldJob>();
  /** job id → job key, for events that name the job only. */
  private readonly keysById = new Map<string, string>();
  private keepAlive: NodeJS.Timeout | undefined;

  constructor(private readonly ackWaitMs: number) {}

  start(): void {
    this.keepAlive = setInterval(() => {
      for (const { msg } of this.held.values()) msg.working();
    }, Math.max(250, Math.floor(this.ackWaitMs / 3)));
  }

  /** Stops holding: the messages are left unacknowledged for another replica after ack_wait. */
  stop(): void {
    clearInterval(this.keepAlive);
    for (const { msg } of this.held.values()) msg.nak();
    this.held.clear();
    this.keysById.clear();
    queueDepth.reset();
  }

  add(held: HeldJob): void {
    const previous = this.held.get(held.job.job_key);
    // A redelivered copy of a message we hold replaces it (the old copy is no longer ackable).
    this.held.set(held.job.job_key, previous ? { ...held, reason: previous.reason } : held);
    if (!previous) queueDepth.inc({ pool: held.job.pool_key });
    this.keysById.set(held.job.job_key.slice(held.job.job_key.lastIndexOf(".") + 1), held.job.job_key);
  }

  /** The job key of a held job, by its id. */
  keyOf(jobId: string): string | undefined {
    return this.keysById.get(jobId);
  }

  get(jobKey: string): HeldJob | undefined {
    return this.held.get(jobKey);
  }

  /** Releases a job for good: its message is acknowledged and leaves the queue. */
  done(jobKey: string): void {
    const held = this.held.get(jobKey);
    if (!held) return;
    held.msg.ack();
    this.held.delete(jobKey);
    this.keysById.delete(jobKey.slice(jobKey.lastIndexOf(".") + 1));
    queueDepth.dec({ pool: held.job.pool_key });
  }

  all(): HeldJob[] {
    return [...this.held.values()];
  }
}
