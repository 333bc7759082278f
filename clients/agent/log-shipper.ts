import type { LogLine } from "../../shared/contract/index.js";
import type { Logger } from "../../shared/runtime/index.js";
import { describeError, errorCode, retrying } from "./backoff.js";
import type { NodePlane } from "./node-plane.js";

/** A batch goes out at least this often while lines wait… */
export const BATCH_INTERVAL_MS = 250;
/** …or at once when this many lines… */
export const BATCH_MAX_LINES = 500;
/** …or this many bytes (as JSON) wait: half the gateway's default body limit. */
export const BATCH_MAX_BYTES = 512 * 1024;

/** How a shipper ended: every line acknowledged, the attempt not ours any more, pushes refused, or the agent stopping. */
export type ShipperOutcome = "flushed" | "stale" | "refused" | "halted";

export interface LogShipperOptions {
  jobId: string;
  attempt: number;
  plane: Pick<NodePlane, "pushLogs">;
  logger: Logger;
  /** Aborted when the agent stops: lines not yet acknowledged stay in the spool for the next start. */
  halt: AbortSignal;
  /** The service has stored every line up to `seq`. */
  onAcknowledged(seq: number): void;
  /** The service refused a push as `job.stale_attempt` (or the job is gone): the attempt is not this node's. */
  onStale(): void;
}

interface Pending {
  line: LogLine;
  bytes: number;
}

/**
 * Sends an attempt's numbered lines in batches, in `seq` order, one push at a time. A
 * push that fails is sent again unchanged (same lines, same `seq`) until the service
 * answers; the service stores each `seq` once, so a resend across a reconnect neither
 * loses nor doubles a line.
 */
export class LogShipper {
  private readonly pending: Pending[] = [];
  private pendingBytes = 0;
  private readonly timer: NodeJS.Timeout;
  private pumping: Promise<void> | undefined;
  private ended: Exclude<ShipperOutcome, "flushed" | "halted"> | undefined;

  constructor(private readonly options: LogShipperOptions) {
    this.timer = setInterval(() => this.kick(), BATCH_INTERVAL_MS);
    this.timer.unref();
  }

  /** Queues lines already numbered (and spooled). */
  enqueue(lines: readonly LogLine[]): void {
    if (this.ended) return;
    for (const line of lines) {
      const bytes = Buffer.byteLength(JSON.stringify(line));
      this.pending.push({ line, bytes });
      this.pendingBytes += bytes;
    }
    if (this.full()) this.kick();
  }

  /** Sends everything still queued, then stops; resolves with how it ended. */
  async close(): Promise<ShipperOutcome> {
    clearInterval(this.timer);
    for (;;) {
      await this.pumping;
      if (this.ended) return this.ended;
      if (this.options.halt.aborted) return "halted";
      if (this.pending.length === 0) return "flushed";
      this.pumping = this.pump(true).finally(() => (this.pumping = undefined));
    }
  }

  private full(): boolean {
    return this.pending.length >= BATCH_MAX_LINES || this.pendingBytes >= BATCH_MAX_BYTES;
  }

  private kick(): void {
    if (this.pumping || this.pending.length === 0 || this.ended || this.options.halt.aborted) return;
    this.pumping = this.pump(false).finally(() => (this.pumping = undefined));
  }

  /** Pushes the first batch, then more: all of them when `everything`, else while a full batch waits. */
  private async pump(everything: boolean): Promise<void> {
    const { jobId, attempt, plane, logger, halt } = this.options;
    for (
      let first = true;
      this.pending.length > 0 && !this.ended && (everything || first || this.full());
      first = false
    ) {
      const batch = this.nextBatch();
      try {
        await retrying(() => plane.pushLogs({ job_id: jobId, attempt, lines: batch }, halt), {
          what: `log push of ${jobId}#${attempt}`,
          logger,
          signal: halt,
        });
      } catch (error) {
        if (halt.aborted) return;
        const code = errorCode(error);
        const dropped = this.pending.length;
        this.pending.length = 0;
        this.pendingBytes = 0;
        if (code === "job.stale_attempt" || code === "resource.not_found") {
          this.ended = "stale";
          logger.info(
            { job_id: jobId, attempt, dropped },
            "the attempt is no longer this node's; its unsent log lines are dropped",
          );
          this.options.onStale();
        } else {
          this.ended = "refused";
          logger.error(
            { job_id: jobId, attempt, dropped, error: describeError(error) },
            "log lines refused; the rest of this attempt's lines are dropped",
          );
        }
        return;
      }
      const sent = this.pending.splice(0, batch.length);
      for (const item of sent) this.pendingBytes -= item.bytes;
      this.options.onAcknowledged(batch[batch.length - 1]!.seq);
    }
  }

  /** The first lines, up to the line and byte limits (at least one line). */
  private nextBatch(): LogLine[] {
    const batch: LogLine[] = [];
    let bytes = 0;
    for (const item of this.pending) {
      if (batch.length > 0 && (batch.length >= BATCH_MAX_LINES || bytes + item.bytes > BATCH_MAX_BYTES)) break;
      batch.push(item.line);
      bytes += item.bytes;
    }
    return batch;
  }
}
