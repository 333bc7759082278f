import type { JsMsg } from "@nats-io/jetstream";
import type { PendingReason } from "../../shared/contract/index.js";
import type { PendingJob } from "./plan.js";
import { queueDepth } from "./scheduler-metrics.js";

/** A queued job this replica took from the job records' stream and holds (unacknowledged) until it is placed. */
export interface HeldJob {
  /** The message of the record's queued revision. */
  msg: JsMsg;
  job: PendingJob;
  /** The record's attempt when queued; the assignment makes it attempt + 1. */
  attempt: number;
  /** The pending reason the record carries, so an unchanged reason costs no write. */
  reason: PendingReason | null;
}

/**
 * The jobs this replica holds. Their messages stay unacknowledged, kept alive with
 * `working()`: if this replica dies, the consumer hands them to another replica. Every
 * removal names the attempt it is about, so a newer queued revision of the same job,
 * delivered meanwhile, is never acknowledged by mistake.
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

  /** Stops holding: the messages go back to the consumer for another replica. */
  stop(): void {
    clearInterval(this.keepAlive);
    for (const { msg } of this.held.values()) msg.nak();
    this.held.clear();
    this.keysById.clear();
    queueDepth.reset();
  }

  /** Holds a queued revision; a newer revision of a job already held replaces it (the old message is acknowledged). */
  add(held: HeldJob): void {
    const key = held.job.job_key;
    const previous = this.held.get(key);
    if (previous && previous.msg.seq !== held.msg.seq) previous.msg.ack();
    this.held.set(key, held);
    if (!previous) queueDepth.inc({ pool: held.job.pool_key });
    this.keysById.set(jobIdOf(key), key);
  }

  /** The job key of a held job, by its id. */
  keyOf(jobId: string): string | undefined {
    return this.keysById.get(jobId);
  }

  get(jobKey: string): HeldJob | undefined {
    return this.held.get(jobKey);
  }

  /** Lets a job go for good once it moved past `attempt` or left `queued` at it: its message is acknowledged. */
  drop(jobKey: string, attempt: number): void {
    const held = this.held.get(jobKey);
    if (held && held.attempt <= attempt) this.forget(jobKey, held);
  }

  /**
   * This replica wrote a new revision of the held record (a pending reason): that revision is
   * the job's announcement now, taken by whichever replica it reaches, so the old one is let
   * go — unless the new one already reached this replica and replaced it.
   */
  handOff(jobKey: string, msg: JsMsg): void {
    const held = this.held.get(jobKey);
    if (held?.msg === msg) this.forget(jobKey, held);
  }

  all(): HeldJob[] {
    return [...this.held.values()];
  }

  private forget(jobKey: string, held: HeldJob): void {
    held.msg.ack();
    this.held.delete(jobKey);
    this.keysById.delete(jobIdOf(jobKey));
    queueDepth.dec({ pool: held.job.pool_key });
  }
}

function jobIdOf(jobKey: string): string {
  return jobKey.slice(jobKey.lastIndexOf(".") + 1);
}
