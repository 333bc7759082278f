import type { SubmitJobResponse } from "../../shared/contract/index.js";
import { SubmitJobCommand } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { assertFitsMessage, encodeJson, type ServedRequest } from "../../shared/nats/index.js";
import { jobKey, operatorPoolKey, selfHostedPoolKey, type JobRecord } from "../../shared/records/index.js";
import { randomBase62, toBase62 } from "../../shared/runtime/index.js";
import type { z } from "zod";
import { checkCredit } from "./credit-gate.js";
import { checkJobType } from "./key-quota-rules.js";
import { admitToKeyQuota } from "./key-quotas.js";
import type { SchedulerContext } from "./scheduler-context.js";
import { jobsSubmitted } from "./scheduler-metrics.js";

/** A job id that sorts by creation time: 8 base62 characters of milliseconds, then 12 random. */
export function newJobId(now: number): string {
  return `job_${toBase62(now, 8)}${randomBase62(12)}`;
}

/** How a job is made besides its request: by whom (a schedule) and under which id (one chosen before, so a repeat finds it). */
export interface NewJobOptions {
  /** The id to create the job under; a new one when absent. A job already there is `resource.already_exists`. */
  jobId?: string | undefined;
  scheduleId?: string | null | undefined;
}

/** A job's `timeout_seconds` within the service's maximum; `path` names the field in the refusal. */
export function checkTimeout(ctx: SchedulerContext, timeoutSeconds: number, path = "timeout_seconds"): void {
  if (timeoutSeconds <= ctx.config.CJS_MAX_JOB_TIMEOUT_SECONDS) return;
  throw new AppError("request.invalid", `${path} is above the service's maximum.`, {
    details: { issues: [{ path, message: `at most ${ctx.config.CJS_MAX_JOB_TIMEOUT_SECONDS}` }] },
  });
}

/** Submit: `createJob` for the caller. */
export function submitJob(ctx: SchedulerContext) {
  return ({ caller, body }: z.infer<typeof SubmitJobCommand>, served: ServedRequest): Promise<SubmitJobResponse> => createJob(ctx, caller, body, served);
}

/**
 * Makes one job: the checks (the caller's key may submit this type, the queue has room,
 * the key has room in its quotas), then one durable write: the record, whose revision is
 * also its queue announcement.
 */
export async function createJob(
  ctx: SchedulerContext,
  caller: z.infer<typeof SubmitJobCommand>["caller"],
  body: z.infer<typeof SubmitJobCommand>["body"],
  { log, trace }: Pick<ServedRequest, "log" | "trace">,
  options: NewJobOptions = {},
): Promise<SubmitJobResponse> {
  checkTimeout(ctx, body.timeout_seconds);
  checkJobType(caller.quotas, body.type);
  await checkCredit(ctx, caller, body, trace);
  const now = ctx.clock.now();
  const at = new Date(now).toISOString();
  const operatorPool = ctx.config.CJS_OPERATOR_POOLS.includes(body.pool_id);
  const record: JobRecord = {
    job_id: options.jobId ?? newJobId(now),
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
    pool_key: operatorPool ? operatorPoolKey(caller.app_id, body.pool_id, ctx.config.CJS_SHARED_OPERATOR_POOLS) : selfHostedPoolKey(caller.business_id, body.pool_id),
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
    waiting_on: body.depends_on ?? [],
    state: "queued",
    attempt: 0,
    node_id: null,
    exit_code: null,
    error: null,
    usage: null,
    pending_reason: "waiting_for_scheduler",
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
  await ctx.queueDepth.admit(async () => {
    const admission = await admitToKeyQuota(ctx, caller, record.job_id, now);
    try {
      await ctx.store.jobs.create(key, { ...record, key_slot: admission?.holdsSlot ?? false });
    } catch (error) {
      // A record write whose answer was lost may have landed: then the admission is used.
      if (admission && !(await ctx.store.jobs.get(key).catch(() => null))) await admission.release();
      throw error;
    }
  });
  jobsSubmitted.inc({ pool_kind: operatorPool ? "operator" : "self_hosted" });
  // The line that ties the job to the request: the job's later lines name its job_id.
  log.info({ job_id: record.job_id, pool_id: body.pool_id, type: body.type }, "job submitted");
  return { job_id: record.job_id, state: record.state, created_at: record.created_at };
}
