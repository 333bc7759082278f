import type { JobResultRequest } from "../../shared/contract/index.js";
import type { Logger } from "../../shared/runtime/index.js";
import { listArtifacts, uploadArtifacts } from "./artifacts.js";
import { describeError, errorCode, retrying } from "./backoff.js";
import type { LogShipper } from "./log-shipper.js";
import type { AgentAssignment, NodePlane } from "./node-plane.js";
import type { StateFile } from "./state-file.js";
import { removeWorkspace, type Workspace } from "./workspace.js";

/** What finishing an attempt needs from the agent. */
export interface FinishContext {
  plane: NodePlane;
  state: StateFile;
  logger: Logger;
  /** Aborted when the agent stops: what is not done stays in the state file and spool for the next start. */
  halt: AbortSignal;
  keepWorkspaces: boolean;
  /**
   * Whether the slot a result frees should take the next job in the same exchange (not while
   * the agent drains or stops), and what to do with that job when the answer brings it.
   */
  nextJob?: { wanted: () => boolean; take: (job: AgentAssignment) => void };
}

export interface FinishOptions {
  key: string;
  workspace: Workspace;
  shipper: LogShipper;
  /** What to report; null when the service stopped the attempt (its job already ended). */
  result: JobResultRequest | null;
  artifactUploadUrl: string | null;
  /** Why the attempt was stopped meanwhile, if it was: nothing more is sent then. */
  stoppedReason: () => string | null;
}

/**
 * The end of an attempt whose command has ended (or died with an earlier agent): its
 * last log lines, its artifacts, then its result, in that order, because the result ends
 * the attempt. Then the attempt is forgotten and its workspace removed. When the agent
 * stops halfway, everything stays on disk for the next start to finish.
 */
export async function finishAttempt(ctx: FinishContext, options: FinishOptions): Promise<void> {
  const { logger, halt } = ctx;
  const { key, workspace, shipper, result } = options;
  try {
    const logs = await shipper.close();
    if (logs === "halted" || halt.aborted) return;
    if (result && logs !== "stale" && options.stoppedReason() === null) {
      await sendArtifacts(ctx, options);
      if (options.stoppedReason() === null) await reportResult(ctx, result);
    }
  } catch (error) {
    if (halt.aborted) return;
    throw error;
  }
  if (halt.aborted) return;
  await ctx.state.removeAttempt(key);
  if (!ctx.keepWorkspaces)
    await removeWorkspace(workspace).catch((error: Error) =>
      logger.warn({ error: error.message, dir: workspace.dir }, "workspace not removed"),
    );
}

async function sendArtifacts(ctx: FinishContext, options: FinishOptions): Promise<void> {
  const files = await listArtifacts(options.workspace.artifactsDir, ctx.logger);
  if (files.length === 0) return;
  if (!options.artifactUploadUrl) {
    ctx.logger.warn(
      { attempt_key: options.key, files: files.length },
      "the assignment has no artifact_upload_url (this gateway takes no artifacts): files not uploaded",
    );
    return;
  }
  const uploaded = await uploadArtifacts({
    files,
    urlTemplate: options.artifactUploadUrl,
    plane: ctx.plane,
    logger: ctx.logger,
    halt: ctx.halt,
    stillWanted: () => options.stoppedReason() === null,
  });
  ctx.logger.info({ attempt_key: options.key, uploaded }, "artifacts uploaded");
}

/** Sends the result until the service answers; a refusal as stale means another outcome already ended the attempt. */
export async function reportResult(ctx: FinishContext, result: JobResultRequest): Promise<void> {
  const what = `result of ${result.job_id}#${result.attempt}`;
  try {
    const offer = ctx.nextJob?.wanted() === true;
    const answer = await retrying(() => ctx.plane.result(offer ? { ...result, take_next: true } : result, ctx.halt), {
      what,
      logger: ctx.logger,
      signal: ctx.halt,
    });
    ctx.logger.info(
      {
        job_id: result.job_id,
        attempt: result.attempt,
        outcome: result.outcome,
        exit_code: result.exit_code,
        state: answer.state,
      },
      "result reported",
    );
    if (answer.next) ctx.nextJob?.take(answer.next);
  } catch (error) {
    if (ctx.halt.aborted) throw error;
    const code = errorCode(error);
    if (code === "job.stale_attempt" || code === "resource.not_found") {
      ctx.logger.info(
        { job_id: result.job_id, attempt: result.attempt, error: describeError(error) },
        "result not recorded: the attempt had already ended otherwise",
      );
      return;
    }
    ctx.logger.error({ job_id: result.job_id, attempt: result.attempt, error: describeError(error) }, "result refused");
  }
}
