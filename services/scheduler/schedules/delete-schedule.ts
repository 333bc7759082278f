import type { z } from "zod";
import type { DeleteScheduleResponse, ScheduleRefCommand } from "../../../shared/contract/index.js";
import { callerScheduleKey, scheduleNotFound } from "./schedule-record.js";
import type { Schedules } from "./schedule-store.js";

/**
 * How long a deleted schedule's marker stays, so every replica's watch sees the deletion;
 * then the server removes it and the bucket does not grow with every schedule ever deleted.
 * A replica that missed it forgets the schedule at its next whole read (`DueSchedules`).
 */
const MARKER_TTL_SECONDS = 3600;

/** Deletes the schedule: no tick after this makes a job; the jobs it made are kept. */
export function deleteSchedule(schedules: Schedules) {
  return async (command: z.infer<typeof ScheduleRefCommand>): Promise<DeleteScheduleResponse> => {
    const removed = await schedules.removeIf(callerScheduleKey(command), () => true, {
      markerTtlSeconds: MARKER_TTL_SECONDS,
    });
    if (!removed) throw scheduleNotFound(command.body.schedule_id);
    return { schedule_id: command.body.schedule_id, deleted: true };
  };
}
