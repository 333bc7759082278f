import type { JobResultRequest, JobUsage, LogLine } from "../../shared/contract/index.js";
import type { Logger } from "../../shared/runtime/index.js";
import { describeError } from "./backoff.js";
import { finishAttempt, reportResult } from "./finish-attempt.js";
import { type ExitStatus, JobProcess } from "./job-process.js";
import { LineSplitter } from "./line-splitter.js";
import { LogShipper } from "./log-shipper.js";
import { LogSpool } from "./log-spool.js";
import type { AgentAssignment } from "./node-plane.js";
import { procAvailable, signalGroup } from "./proc.js";
import { attemptKey } from "./state-file.js";
import type { AttemptContext, TrackedAttempt } from "./tracked-attempt.js";
import { UsageSampler } from "./usage-sampler.js";
import { createWorkspace, jobEnvironment, type Workspace } from "./workspace.js";

/**
 * The agent's own deadline comes this long after the job's `timeout_seconds`, so that
 * the scheduler (whose clock started earlier, at delivery) normally times the job out
 * first and the agent's deadline only matters when the service cannot reach it.
 */
export const LOCAL_TIMEOUT_SLACK_MS = 2_000;

const round3 = (value: number) => Math.round(value * 1000) / 1000;

/**
 * One attempt from start to end: a fresh workspace, the command in its own process
 * group, its output numbered, spooled and shipped, its usage sampled, then artifacts and
 * the result. The attempt is in the state file from before the command starts until its
 * result is answered, so an agent killed at any point finishes it at its next start.
 */
export class AttemptRun implements TrackedAttempt {
  readonly key: string;
  readonly job_id: string;
  readonly attempt: number;
  readonly listed = true;
  readonly done: Promise<void>;
  private readonly logger: Logger;
  private process: JobProcess | undefined;
  private running = false;
  private stopReason: string | null = null;
  private timedOut = false;

  constructor(
    private readonly ctx: AttemptContext,
    private readonly job: AgentAssignment,
  ) {
    this.key = attemptKey(job);
    this.job_id = job.job_id;
    this.attempt = job.attempt;
    this.logger = ctx.logger.child({ job_id: job.job_id, attempt: job.attempt });
    this.done = this.run().catch((error: unknown) => {
      this.logger.error(
        { error: describeError(error) },
        "the attempt could not be finished; the next start of the agent retries it",
      );
    });
  }

  get commandRunning(): boolean {
    return this.running && this.stopReason === null && !this.timedOut;
  }

  stop(reason: string): void {
    if (this.stopReason !== null) return;
    this.stopReason = reason;
    this.logger.info({ reason }, "stopping the attempt");
    if (this.running) void this.process?.kill(this.ctx.killGraceMs);
  }

  async halt(graceMs: number): Promise<void> {
    if (this.running) await this.process?.kill(graceMs);
    await this.done;
  }

  killNow(): void {
    if (this.running && this.process) signalGroup(this.process.pgid, "SIGKILL");
  }

  private async run(): Promise<void> {
    const { ctx, job, key } = this;
    let workspace: Workspace;
    try {
      workspace = await createWorkspace(ctx.workDir, job.job_id, job.attempt);
      await ctx.state.update((state) => {
        state.attempts.push({
          job_id: job.job_id,
          attempt: job.attempt,
          workspace: workspace.dir,
          pgid: null,
          pgid_start_ticks: null,
          acked_seq: 0,
          artifact_upload_url: job.artifact_upload_url ?? null,
          result: null,
          stopped: null,
        });
      });
    } catch (error) {
      // Nothing ran and nothing is on disk to finish later: say so now rather than leave the job running.
      this.logger.error({ error: describeError(error) }, "cannot prepare the attempt's workspace");
      const message = `The agent could not prepare the job's workspace: ${describeError(error)}`.slice(0, 2000);
      await reportResult(ctx, {
        job_id: job.job_id,
        attempt: job.attempt,
        outcome: "failed",
        exit_code: null,
        error: { code: "agent.setup_failed", message },
      });
      return;
    }
    const spool = LogSpool.open(workspace.spoolPath);
    const shipper = new LogShipper({
      jobId: job.job_id,
      attempt: job.attempt,
      plane: ctx.plane,
      logger: this.logger,
      halt: ctx.halt,
      onAcknowledged: (seq) =>
        void ctx.state
          .updateAttempt(key, (entry) => void (entry.acked_seq = Math.max(entry.acked_seq, seq)))
          .catch(() => undefined),
      onStale: () => this.stop("stale_attempt"),
    });
    let seq = 0;
    const record = (stream: LogLine["stream"], texts: readonly string[]) => {
      if (texts.length === 0) return;
      const ts = new Date(ctx.clock.now()).toISOString();
      const lines = texts.map((line) => ({ seq: ++seq, stream, line, ts }));
      // Spooled before it can be sent: a line the service stored is always on disk too.
      spool.append(lines);
      shipper.enqueue(lines);
    };

    const result = this.stopReason === null ? await this.execute(workspace, record) : null;
    spool.close();
    if (ctx.halt.aborted) {
      void shipper.close();
      return;
    }
    const stopped = this.stopReason;
    await ctx.state.updateAttempt(key, (entry) => {
      entry.result = stopped === null ? result : null;
      entry.stopped = stopped;
    });
    await finishAttempt(ctx, {
      key,
      workspace,
      shipper,
      result: stopped === null ? result : null,
      artifactUploadUrl: job.artifact_upload_url ?? null,
      stoppedReason: () => this.stopReason,
    });
  }

  /** Runs the command to its end and returns the result to report. */
  private async execute(
    workspace: Workspace,
    record: (stream: LogLine["stream"], texts: readonly string[]) => void,
  ): Promise<JobResultRequest> {
    const { ctx, job, key } = this;
    const startedMs = ctx.clock.now();
    const wall = () => ({ wall_seconds: round3((ctx.clock.now() - startedMs) / 1000) });
    const splitters = { stdout: new LineSplitter(), stderr: new LineSplitter() };
    let child: JobProcess;
    try {
      child = await JobProcess.start(job.command, {
        cwd: workspace.dir,
        env: jobEnvironment(job, workspace, ctx.env),
        onOutput: (stream, chunk) => record(stream, splitters[stream].push(chunk)),
      });
    } catch (error) {
      this.logger.warn({ command: job.command[0], error: (error as Error).message }, "the command could not start");
      return {
        job_id: job.job_id,
        attempt: job.attempt,
        outcome: "failed",
        exit_code: null,
        error: {
          code: "agent.spawn_failed",
          message: `Cannot start ${JSON.stringify(job.command[0])}: ${(error as Error).message}`.slice(0, 2000),
        },
        usage: wall(),
      };
    }
    this.process = child;
    this.running = true;
    this.logger.info({ pgid: child.pgid }, "command started");
    void ctx.state.updateAttempt(key, (entry) => {
      entry.pgid = child.pgid;
      entry.pgid_start_ticks = child.startTicks;
    });
    // Stopped while it was starting.
    if (this.stopReason !== null) void child.kill(ctx.killGraceMs);

    const sampler = procAvailable() ? new UsageSampler(child.pgid) : null;
    sampler?.start();
    const deadline = setTimeout(
      () => {
        this.timedOut = true;
        this.logger.warn({ timeout_seconds: job.timeout_seconds }, "the command ran past its timeout; stopping it");
        void child.kill(ctx.killGraceMs);
      },
      job.timeout_seconds * 1000 + LOCAL_TIMEOUT_SLACK_MS,
    );

    const { status, leftovers } = await child.finish(ctx.killGraceMs);
    clearTimeout(deadline);
    this.running = false;
    record("stdout", splitters.stdout.end());
    record("stderr", splitters.stderr.end());
    const usage: JobUsage = { ...wall(), ...(await sampler?.stop()) };
    this.logger.info({ exit_code: status.code, signal: status.signal, leftovers, usage }, "command ended");
    return this.resultOf(status, usage);
  }

  private resultOf(status: ExitStatus, usage: JobUsage): JobResultRequest {
    const { job_id, attempt } = this.job;
    if (this.timedOut) {
      return {
        job_id,
        attempt,
        outcome: "failed",
        exit_code: status.code,
        error: {
          code: "agent.timed_out",
          message: `The command ran longer than its timeout of ${this.job.timeout_seconds} s and was stopped.`,
        },
        usage,
      };
    }
    if (status.code === 0) return { job_id, attempt, outcome: "succeeded", exit_code: 0, usage };
    if (status.code !== null) return { job_id, attempt, outcome: "failed", exit_code: status.code, usage };
    return {
      job_id,
      attempt,
      outcome: "failed",
      exit_code: null,
      error: { code: "agent.killed_by_signal", message: `The command was killed by ${status.signal ?? "a signal"}.` },
      usage,
    };
  }
}
