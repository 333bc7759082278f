import type { JobResultRequest, LogLine } from "../../shared/contract/index.js";
import type { Logger } from "../../shared/runtime/index.js";
import { describeError } from "./backoff.js";
import { finishAttempt } from "./finish-attempt.js";
import { killProcessGroup } from "./job-process.js";
import { LogShipper } from "./log-shipper.js";
import { LogSpool } from "./log-spool.js";
import { groupAlive, readStat } from "./proc.js";
import { type AttemptEntry, attemptKey } from "./state-file.js";
import type { AttemptContext, TrackedAttempt } from "./tracked-attempt.js";
import { workspaceOf } from "./workspace.js";

/**
 * An attempt a previous run of the agent did not finish (it was killed, or stopped
 * hard): its leftover processes are stopped, every spooled line above the acknowledged
 * `seq` is sent again, then its result: the one recorded when its command ended, or
 * `failed` with `agent.restarted` when the command died with the agent.
 */
export class RecoveredAttempt implements TrackedAttempt {
  readonly key: string;
  readonly job_id: string;
  readonly attempt: number;
  readonly listed = false;
  readonly commandRunning = false;
  readonly done: Promise<void>;
  private readonly logger: Logger;
  private stopReason: string | null = null;

  constructor(
    private readonly ctx: AttemptContext,
    private readonly entry: AttemptEntry,
  ) {
    this.key = attemptKey(entry);
    this.job_id = entry.job_id;
    this.attempt = entry.attempt;
    this.logger = ctx.logger.child({ job_id: entry.job_id, attempt: entry.attempt });
    this.done = this.run().catch((error: unknown) => {
      this.logger.error({ error: describeError(error) }, "the attempt left by the previous run could not be finished");
    });
  }

  stop(reason: string): void {
    this.stopReason ??= reason;
  }

  async halt(): Promise<void> {
    await this.done;
  }

  killNow(): void {}

  private async run(): Promise<void> {
    const { ctx, entry } = this;
    await this.stopLeftovers();
    const workspace = workspaceOf(entry.workspace);
    const spooled = await LogSpool.read(workspace.spoolPath);
    const unsent = unsentLines(spooled, entry.acked_seq);
    this.logger.info(
      { unsent: unsent.length, acked_seq: entry.acked_seq, had_result: entry.result !== null },
      "finishing an attempt left by the previous run",
    );
    const shipper = new LogShipper({
      jobId: entry.job_id,
      attempt: entry.attempt,
      plane: ctx.plane,
      logger: this.logger,
      halt: ctx.halt,
      onAcknowledged: (seq) =>
        void ctx.state
          .updateAttempt(this.key, (saved) => void (saved.acked_seq = Math.max(saved.acked_seq, seq)))
          .catch(() => undefined),
      onStale: () => this.stop("stale_attempt"),
    });
    shipper.enqueue(unsent);
    await finishAttempt(ctx, {
      key: this.key,
      workspace,
      shipper,
      result: entry.stopped !== null ? null : (entry.result ?? restartedResult(entry)),
      artifactUploadUrl: entry.artifact_upload_url,
      stoppedReason: () => this.stopReason,
    });
  }

  /** Stops what is left of the job's process group, unless that pid now belongs to an unrelated process. */
  private async stopLeftovers(): Promise<void> {
    const { pgid, pgid_start_ticks: startTicks } = this.entry;
    if (pgid === null) return;
    const leader = await readStat(pgid);
    if (leader && startTicks !== null && leader.startTicks !== startTicks) return;
    if (!(await groupAlive(pgid))) return;
    this.logger.warn({ pgid }, "stopping processes the job left running when the agent died");
    await killProcessGroup(pgid, this.ctx.killGraceMs);
  }
}

/** The spooled lines the service may not have: above the acknowledged `seq`, in order, once each. */
export function unsentLines(spooled: readonly LogLine[], ackedSeq: number): LogLine[] {
  const lines = spooled.filter((line) => line.seq > ackedSeq).sort((a, b) => a.seq - b.seq);
  return lines.filter((line, index) => line.seq !== lines[index - 1]?.seq);
}

function restartedResult(entry: AttemptEntry): JobResultRequest {
  return {
    job_id: entry.job_id,
    attempt: entry.attempt,
    outcome: "failed",
    exit_code: null,
    error: {
      code: "agent.restarted",
      message: "The agent stopped while the command ran, and the command was stopped with it.",
    },
  };
}
