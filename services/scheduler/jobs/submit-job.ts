import type { DryRunPlan, SubmitJobResponse } from "../../../shared/contract/index.js";
import { SubmitJobCommand } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { assertFitsMessage, encodeJson, type ServedRequest } from "../../../shared/nats/index.js";
import { isOperatorPool, jobKey, type JobRecord, placementPoolKey } from "../../../shared/records/index.js";
import { newJobId } from "../../../shared/runtime/index.js";
import type { z } from "zod";
import { checkCredit } from "./credit-gate.js";
import { dryRun } from "./dry-run.js";
import { checkSubmission, jobPoolKey } from "./submission.js";
import { checkDependencies, linkDependents } from "../queue/dependencies.js";
import { taggedJobId } from "./job-tag.js";
import { admitToKeyQuota } from "./key-quotas.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { jobsSubmitted } from "../scheduler-metrics.js";
import { nodeAtSubmit, reserveAtSubmit, type SubmitQueue } from "../placement/place-at-submit.js";
import { countPlacement, wakeNode } from "../placement/placer.js";
import { release } from "../placement/reservations.js";
import { assign } from "./transitions.js";

export { newJobId };

/** How a job is made besides its request: by whom (a schedule) and under which id (one chosen before, so a repeat finds it). */
export interface NewJobOptions {
  /** The id to create the job under (its tag set by `taggedJobId`); a new one when absent. A job already there is `resource.already_exists`. */
  jobId?: string | undefined;
  scheduleId?: string | null | undefined;
  /** The replica's queue: with it, a job a node can take now is created assigned to that node (decision 0094). */
  queue?: SubmitQueue | undefined;
}

/** What a submit answered: the job as it was made (it entered the queue; one placed at once is already assigned). */
function submitAnswer(record: Pick<JobRecord, "job_id" | "created_at">): SubmitJobResponse {
  return { job_id: record.job_id, state: "queued", created_at: record.created_at };
}

/**
 * Submit: `createJob` for the caller, or with `dry_run` what it would do (`dryRun`). With a `job_id` (an idempotent request), a job
 * already made under it is the answer, as its first submit gave it: read before any
 * admission so a repeat takes no quota or credit check (not for an id chosen just now, `job_id_new`).
 */
export function submitJob(ctx: SchedulerContext, queue: SubmitQueue) {
  return async (
    { caller, body, job_id, job_id_new }: z.infer<typeof SubmitJobCommand>,
    served: ServedRequest,
  ): Promise<SubmitJobResponse | DryRunPlan> => {
    if (body.dry_run) return dryRun(ctx, caller, body, served);
    if (job_id === undefined) return createJob(ctx, caller, body, served, { queue });
    const jobId = taggedJobId(ctx, caller, body, job_id);
    const made = async () =>
      (await ctx.store.jobs.get(jobKey(caller.app_id, caller.business_id, jobId)))?.value ?? null;
    // A repeat's id may name a job already made; a new id names none, unless a racing repeat made it (the create then says so).
    const existing = job_id_new ? null : await made();
    if (existing) return submitAnswer(existing);
    try {
      return await createJob(ctx, caller, body, served, { jobId, queue });
    } catch (error) {
      // A repeat that raced the first (lost the create, or was refused a quota the first had just taken): the first's job is the answer.
      const winner = await made().catch(() => null);
      if (winner) return submitAnswer(winner);
      throw error;
    }
  };
}

function isAlreadyExists(error: unknown): boolean {
  return error instanceof AppError && error.code === "resource.already_exists";
}

/**
 * Makes one job: the checks (the caller's key may submit this type, the queue has room,
 * the key has room in its quotas), then one durable write: the record, whose revision is
 * also its queue announcement. When a node can take the job now and nothing of its pool
 * waits (`nodeAtSubmit`), the node's room is reserved first and the record is written
 * already assigned to it: the write a round would make next is saved (decision 0094).
 */
export async function createJob(
  ctx: SchedulerContext,
  caller: z.infer<typeof SubmitJobCommand>["caller"],
  body: z.infer<typeof SubmitJobCommand>["body"],
  { log, trace }: Pick<ServedRequest, "log" | "trace">,
  options: NewJobOptions = {},
): Promise<SubmitJobResponse> {
  checkSubmission(ctx, caller, body);
  await checkCredit(ctx, caller, body, trace);
  const dependencies = await checkDependencies(ctx, caller, body.depends_on);
  const now = ctx.clock.now();
  const at = new Date(now).toISOString();
  const operatorPool = isOperatorPool(ctx.config, body.pool_id);
  const record: JobRecord = {
    job_id: options.jobId
      ? taggedJobId(ctx, caller, body, options.jobId)
      : taggedJobId(ctx, caller, body, newJobId(now), ctx.jobsWatch.partitionList),
    app_id: caller.app_id,
    business_id: caller.business_id,
    user_id: caller.user_id,
    key_id: caller.key_id,
    name: body.name ?? null,
    type: body.type,
    command: body.command,
    env: body.env,
    resources: body.resources,
    timeout_seconds: body.timeout_seconds,
    pool_id: body.pool_id,
    pool_key: jobPoolKey(ctx, caller, body.pool_id),
    labels: body.labels,
    priority: body.priority,
    metadata: body.metadata,
    max_attempts: body.max_attempts,
    retry: body.retry ?? null,
    retry_count: 0,
    queue_timeout_seconds: body.queue_timeout_seconds ?? null,
    run_at: body.run_at ?? null,
    next_attempt_at: body.run_at ?? null,
    depends_on: body.depends_on ?? [],
    dependents: [],
    concurrency: body.concurrency ?? null,
    schedule_id: options.scheduleId ?? null,
    waiting_on: dependencies.waitingOn,
    state: "queued",
    attempt: 0,
    node_id: null,
    exit_code: null,
    error: null,
    usage: null,
    pending_reason: body.run_at ? "scheduled" : "waiting_for_scheduler",
    created_at: at,
    queued_at: at,
    started_at: null,
    finished_at: null,
    updated_at: at,
    deadline_at: null,
    attempt_base: 0,
    timeline: [{ at, state: "queued", attempt: 0, reason: "submitted", node_id: null }],
  };
  // A record over the message limit cannot be written: refused before any quota is taken.
  assertFitsMessage(ctx.nc, encodeJson({ ...record, key_slot: true }), "job record");
  const key = jobKey(caller.app_id, caller.business_id, record.job_id);
  let placedOn: string | null = null;
  await ctx.queueDepth.admit(async () => {
    const admission = await admitToKeyQuota(ctx, caller, record.job_id, now);
    const node = options.queue ? nodeAtSubmit(ctx, options.queue, record, now) : null;
    let reserved = false;
    let written = record;
    try {
      reserved = node !== null && (await reserveAtSubmit(ctx, node, key, record, now));
      if (node && reserved) written = assign(record, node.node_id, now);
      await ctx.store.jobs.create(key, { ...written, key_slot: admission?.holdsSlot ?? false });
    } catch (error) {
      // A record write whose answer was lost may have landed: then the admission and the reservation are used.
      // A record already there is another request's (an idempotent repeat): this admission and reservation are not.
      const unused = isAlreadyExists(error) || !(await ctx.store.jobs.get(key).catch(() => null));
      if (admission && unused) await admission.release({ keepSlot: isAlreadyExists(error) });
      if (node && reserved && unused) await release(ctx, node.node_id, record.job_id, 1, { unassigned: true });
      throw error;
    }
    if (node && reserved && options.queue) {
      placedOn = node.node_id;
      // The business's turn in its pool is taken, as a round's placement takes it.
      const pool_key = placementPoolKey(record, ctx.config.CJS_SHARED_OPERATOR_POOLS);
      options.queue.markServed({
        pool_key,
        business_id: record.business_id,
        priority: record.priority,
        concurrency: null,
      });
      countPlacement(ctx, written);
      wakeNode(ctx, node.node_id, written);
    }
  });
  // The record first, held by waiting_on, then its parents told: a stop in between leaves nothing the resolver cannot see.
  const settled = await linkDependents(ctx, key, record.job_id, dependencies);
  jobsSubmitted.inc({ pool_kind: operatorPool ? "operator" : "self_hosted" });
  // The line that ties the job to the request: the job's later lines name its job_id.
  log.info(
    { job_id: record.job_id, pool_id: body.pool_id, type: body.type, ...(placedOn ? { node_id: placedOn } : {}) },
    "job submitted",
  );
  return { job_id: record.job_id, state: settled ?? record.state, created_at: record.created_at };
}
