import { z } from "zod";
import {
  checkId,
  Schedule,
  ScheduleJobTemplate,
  type ScheduleRefCommand,
  type UserContext,
} from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { scopePartition } from "../../../shared/records/index.js";
import { concurrencyGate } from "../queue/concurrency-keys.js";

/**
 * A schedule as stored in `cjs_schedules`. Unknown fields, here and in the job template,
 * pass through, so a replica of an older version that writes the record back keeps what a
 * newer one added.
 */
export const ScheduleRecord = Schedule.extend({ job: ScheduleJobTemplate.loose() }).loose();
export type ScheduleRecord = z.infer<typeof ScheduleRecord>;

/** The start of every key of one business's schedules: `<app>.<business>.`. */
export function businessSchedulesPrefix(appId: string, businessId: string): string {
  return `${checkId("app", appId)}.${checkId("business", businessId)}.`;
}

export function scheduleKey(appId: string, businessId: string, scheduleId: string): string {
  return `${businessSchedulesPrefix(appId, businessId)}${checkId("schedule", scheduleId)}`;
}

/** The concurrency key that makes a schedule's ticks wait for each other (overlap `queue`). */
export function scheduleConcurrencyKey(scheduleId: string): string {
  return `schedule:${scheduleId}`;
}

/**
 * The job partition whose owner fires a schedule: the partition of its concurrency key's
 * jobs, so with overlap `queue` the replica that makes a tick's job also counts the ticks
 * still running.
 */
export function schedulePartitionOfKey(key: string): number {
  const [app_id = "", business_id = "", scheduleId = ""] = key.split(".");
  const gate = concurrencyGate({
    app_id,
    business_id,
    concurrency: { key: scheduleConcurrencyKey(scheduleId), max_running: 1 },
  });
  return scopePartition(gate!.scope);
}

/** The key of the caller's schedule: another business's is simply not under the caller's prefix. */
export function callerScheduleKey({ caller, body }: z.infer<typeof ScheduleRefCommand>): string {
  return scheduleKey(caller.app_id, caller.business_id, body.schedule_id);
}

export function scheduleNotFound(scheduleId: string): AppError {
  return new AppError("resource.not_found", `No schedule ${scheduleId}.`);
}

/** The schedule as callers see it: the public fields only. */
export function publicSchedule(record: ScheduleRecord): Schedule {
  return Schedule.parse(record);
}

/**
 * Who the jobs of a schedule are submitted as: its creator's business and user, with no
 * API key (so no key quotas or key budget apply; the business's credit does).
 */
export function scheduleCaller(record: ScheduleRecord): UserContext {
  return {
    app_id: record.app_id,
    business_id: record.business_id,
    user_id: record.user_id,
    role: "member",
    key_id: null,
    quotas: null,
    operator: false,
  };
}
