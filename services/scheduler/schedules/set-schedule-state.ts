import type { z } from "zod";
import type { SchedulePayload, ScheduleRefCommand, ScheduleState } from "../../../shared/contract/index.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { nextTick } from "./cron.js";
import { callerScheduleKey, publicSchedule, scheduleNotFound } from "./schedule-record.js";
import type { Schedules } from "./schedule-store.js";

/**
 * Pause (no tick until resumed) or resume (from the first tick after now: ticks that came
 * while paused make no job). A schedule already in the state asked for is left as it is.
 */
export function setScheduleState(ctx: SchedulerContext, schedules: Schedules, state: ScheduleState) {
  return async (command: z.infer<typeof ScheduleRefCommand>): Promise<SchedulePayload> => {
    const stored = await schedules.mutate(callerScheduleKey(command), (schedule) => {
      if (schedule.state === state) return undefined;
      const nowMs = ctx.clock.now();
      const next = state === "active" ? nextTick(schedule.cron, schedule.timezone, nowMs) : null;
      return {
        ...schedule,
        state,
        next_run_at: next === null ? null : new Date(next).toISOString(),
        updated_at: new Date(nowMs).toISOString(),
      };
    });
    if (!stored) throw scheduleNotFound(command.body.schedule_id);
    return { schedule: publicSchedule(stored.value) };
  };
}
