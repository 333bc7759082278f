import { isTerminal, type JobError, type SubmitJobRequest } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { Versioned } from "../../../shared/nats/index.js";
import { jobKey } from "../../../shared/records/index.js";
import { forEachBounded, type Logger } from "../../../shared/runtime/index.js";
import { cancelJobAt } from "../jobs/cancel-job.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { scheduleTicks } from "../scheduler-metrics.js";
import { createJob } from "../jobs/submit-job.js";
import { lastTickBy, nextTick } from "./cron.js";
import { dueAt, type DueSchedules } from "./due-schedules.js";
import { tickJobId } from "./schedule-ids.js";
import { taggedJobId } from "../jobs/job-tag.js";
import { scheduleCaller, scheduleConcurrencyKey, type ScheduleRecord } from "./schedule-record.js";
import type { Schedules } from "./schedule-store.js";

/**
 * A tick later than this was missed while no replica fired (the service was down): of
 * such ticks only the latest makes a job, then the schedule goes on from now. A tick late
 * by less (a lease changing hands, a slow pass) is made as usual.
 */
export const LATE_TICK_LIMIT_MS = 60_000;

/** Schedules worked on at once: each tick is a few requests (credit check, job create). */
const PARALLEL_SCHEDULES = 4;

/** What one tick did. */
type TickOutcome = { kind: "made"; jobId: string } | { kind: "skipped" } | { kind: "refused"; error: JobError };

export interface FirePass {
  made: number;
  skipped: number;
  refused: number;
}

function isDue(schedule: ScheduleRecord, nowMs: number): boolean {
  const at = dueAt(schedule);
  return at !== null && at <= nowMs;
}

/** Errors that say nothing about the job (the broker or a service was away): the tick is tried again on the next pass. */
function isPassing(error: unknown): boolean {
  return !(error instanceof AppError) || error.code === "service.unavailable" || error.code === "internal.error";
}

/**
 * One pass of a replica over the schedules it fires (those of its partitions): every
 * active schedule whose tick has come (read afresh) makes that tick's job, then records it and its next tick by
 * compare-and-set. The job id is derived from the schedule and the tick (`tickJobId`), so
 * a tick made again (by a replica that took over, or after a restart) finds its job and
 * makes no other: exactly one job per tick. A schedule that fails is left for the next
 * pass without holding up the others.
 */
export async function fireDueSchedules(
  ctx: SchedulerContext,
  schedules: Schedules,
  due: DueSchedules,
  logger: Logger,
  /** Whether this replica fires the schedule under a key (it owns the schedule's partition). */
  fires: (key: string) => boolean = () => true,
): Promise<FirePass> {
  const nowMs = ctx.clock.now();
  const pass: FirePass = { made: 0, skipped: 0, refused: 0 };
  const keys = (await due.dueKeys(nowMs)).filter(fires);
  await forEachBounded(keys, PARALLEL_SCHEDULES, async (key) => {
    try {
      due.note(key, await fireSchedule(ctx, schedules, key, nowMs, pass, logger));
    } catch (error) {
      logger.warn(
        { err: error, schedule_key: key },
        "a schedule's due ticks were not all handled; the next pass tries again",
      );
    }
  });
  return pass;
}

/** Handles each due tick of one schedule in order; answers the schedule as stored after them (null: gone). */
async function fireSchedule(
  ctx: SchedulerContext,
  schedules: Schedules,
  key: string,
  nowMs: number,
  pass: FirePass,
  logger: Logger,
): Promise<Versioned<ScheduleRecord> | null> {
  let stored = await schedules.get(key);
  while (stored && isDue(stored.value, nowMs)) {
    const schedule = stored.value;
    const dueMs = Date.parse(schedule.next_run_at!);
    const tick =
      nowMs - dueMs > LATE_TICK_LIMIT_MS ? (lastTickBy(schedule.cron, schedule.timezone, nowMs) ?? dueMs) : dueMs;
    const outcome = await runTick(ctx, schedule, tick, logger.child({ schedule_id: schedule.schedule_id }));
    pass[outcome.kind] += 1;
    scheduleTicks.inc({ outcome: outcome.kind });
    stored = await recordTick(ctx, schedules, key, stored, tick, outcome);
  }
  return stored;
}

/** Makes the tick's job, after the overlap policy has had its say on the previous one. */
async function runTick(
  ctx: SchedulerContext,
  schedule: ScheduleRecord,
  tick: number,
  log: Logger,
): Promise<TickOutcome> {
  const body: SubmitJobRequest = {
    ...schedule.job,
    dry_run: false,
    ...(schedule.overlap === "queue"
      ? { concurrency: { key: scheduleConcurrencyKey(schedule.schedule_id), max_running: 1 } }
      : {}),
  };
  const jobId = taggedJobId(ctx, scheduleCaller(schedule), body, tickJobId(schedule.schedule_id, tick));
  const key = (id: string) => jobKey(schedule.app_id, schedule.business_id, id);
  // Made already (the replica that made it stopped before recording it): the overlap policy had its say then.
  if (await ctx.store.jobs.get(key(jobId))) return { kind: "made", jobId };
  const previous = schedule.last_job_id === null ? null : await ctx.store.jobs.get(key(schedule.last_job_id));
  if (previous && !isTerminal(previous.value.state)) {
    if (schedule.overlap === "skip") return { kind: "skipped" };
    if (schedule.overlap === "cancel_previous") {
      await cancelJobAt(ctx, key(previous.value.job_id)).catch((error: unknown) => {
        // It ended or went meanwhile: nothing left to cancel.
        if (!(error instanceof AppError && (error.code === "state.conflict" || error.code === "resource.not_found")))
          throw error;
      });
    }
  }
  try {
    await createJob(
      ctx,
      scheduleCaller(schedule),
      body,
      { log, trace: undefined },
      { jobId, scheduleId: schedule.schedule_id },
    );
    return { kind: "made", jobId };
  } catch (error) {
    if (error instanceof AppError && error.code === "resource.already_exists") return { kind: "made", jobId };
    if (isPassing(error)) throw error;
    const refusal = error as AppError;
    log.info(
      { code: refusal.code, tick: new Date(tick).toISOString() },
      "a schedule's tick was refused; it is not tried again",
    );
    return { kind: "refused", error: { code: refusal.code, message: refusal.message } };
  }
}

/**
 * Records the tick and moves the schedule to its next one, unless the schedule moved on
 * meanwhile (another replica recorded the tick, or it was paused or resumed).
 */
function recordTick(
  ctx: SchedulerContext,
  schedules: Schedules,
  key: string,
  stored: Versioned<ScheduleRecord>,
  tick: number,
  outcome: TickOutcome,
): Promise<Versioned<ScheduleRecord> | null> {
  const firedFrom = stored.value.next_run_at;
  const next = nextTick(stored.value.cron, stored.value.timezone, tick);
  const tickAt = new Date(tick).toISOString();
  return schedules.mutate(
    key,
    (current) => {
      if (current.next_run_at !== firedFrom) return undefined;
      const result =
        outcome.kind === "made"
          ? { last_run_at: tickAt, last_job_id: outcome.jobId, last_error: null }
          : outcome.kind === "skipped"
            ? { last_skipped_at: tickAt, skipped_count: current.skipped_count + 1 }
            : { last_error: outcome.error };
      return {
        ...current,
        ...result,
        next_run_at: next === null ? null : new Date(next).toISOString(),
        updated_at: new Date(ctx.clock.now()).toISOString(),
      };
    },
    stored,
  );
}
