import type { z } from "zod";
import type { CreateScheduleCommand, SchedulePayload } from "../../../shared/contract/index.js";
import { checkJobType } from "../jobs/key-quota-rules.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { checkTimeout } from "../jobs/submission.js";
import { checkCron } from "./cron.js";
import { newScheduleId } from "./schedule-ids.js";
import { publicSchedule, scheduleKey, type ScheduleRecord } from "./schedule-record.js";
import type { Schedules } from "./schedule-store.js";

/**
 * Creates a schedule of the caller's business; its first tick is the first after now. A
 * key limited to some job types may schedule only those: the jobs of ticks carry no key.
 */
export function createSchedule(ctx: SchedulerContext, schedules: Schedules) {
  return async ({ caller, body }: z.infer<typeof CreateScheduleCommand>): Promise<SchedulePayload> => {
    const nowMs = ctx.clock.now();
    const firstTick = checkCron(body.cron, body.timezone, ctx.config.CJS_SCHEDULE_MIN_INTERVAL_SECONDS, nowMs);
    checkJobType(caller.quotas, body.job.type);
    checkTimeout(ctx, body.job.timeout_seconds, "job.timeout_seconds");
    const at = new Date(nowMs).toISOString();
    const record: ScheduleRecord = {
      schedule_id: newScheduleId(nowMs),
      app_id: caller.app_id,
      business_id: caller.business_id,
      user_id: caller.user_id,
      name: body.name ?? null,
      cron: body.cron,
      timezone: body.timezone,
      job: body.job,
      overlap: body.overlap,
      state: body.paused ? "paused" : "active",
      next_run_at: body.paused ? null : new Date(firstTick).toISOString(),
      last_run_at: null,
      last_job_id: null,
      last_error: null,
      last_skipped_at: null,
      skipped_count: 0,
      created_at: at,
      updated_at: at,
    };
    await schedules.create(scheduleKey(caller.app_id, caller.business_id, record.schedule_id), record);
    return { schedule: publicSchedule(record) };
  };
}
