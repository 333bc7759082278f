import type { z } from "zod";
import type { DeleteScheduleResponse, ScheduleRefCommand } from "../../../shared/contract/index.js";
import type { Schedules } from "./schedule-store.js";
import { callerScheduleKey, scheduleNotFound } from "./retrieve-schedule.js";

/** Deletes the schedule: no tick after this makes a job; the jobs it made are kept. */
export function deleteSchedule(schedules: Schedules) {
  return async (command: z.infer<typeof ScheduleRefCommand>): Promise<DeleteScheduleResponse> => {
    const removed = await schedules.removeIf(callerScheduleKey(command), () => true);
    if (!removed) throw scheduleNotFound(command.body.schedule_id);
    return { schedule_id: command.body.schedule_id, deleted: true };
  };
}
