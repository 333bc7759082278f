import type { z } from "zod";
import type { SchedulePayload, ScheduleRefCommand } from "../../../shared/contract/index.js";
import { callerScheduleKey, publicSchedule, scheduleNotFound } from "./schedule-record.js";
import type { Schedules } from "./schedule-store.js";

export function retrieveSchedule(schedules: Schedules) {
  return async (command: z.infer<typeof ScheduleRefCommand>): Promise<SchedulePayload> => {
    const stored = await schedules.get(callerScheduleKey(command));
    if (!stored) throw scheduleNotFound(command.body.schedule_id);
    return { schedule: publicSchedule(stored.value) };
  };
}
