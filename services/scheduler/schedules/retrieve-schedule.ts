import type { z } from "zod";
import type { SchedulePayload, ScheduleRefCommand } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { publicSchedule, scheduleKey } from "./schedule-record.js";
import type { Schedules } from "./schedule-store.js";

/** The key of the caller's schedule: another business's is simply not under the caller's prefix. */
export function callerScheduleKey({ caller, body }: z.infer<typeof ScheduleRefCommand>): string {
  return scheduleKey(caller.app_id, caller.business_id, body.schedule_id);
}

export function scheduleNotFound(scheduleId: string): AppError {
  return new AppError("resource.not_found", `No schedule ${scheduleId}.`);
}

export function retrieveSchedule(schedules: Schedules) {
  return async (command: z.infer<typeof ScheduleRefCommand>): Promise<SchedulePayload> => {
    const stored = await schedules.get(callerScheduleKey(command));
    if (!stored) throw scheduleNotFound(command.body.schedule_id);
    return { schedule: publicSchedule(stored.value) };
  };
}
