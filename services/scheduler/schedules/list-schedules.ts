import type { z } from "zod";
import type { ListSchedulesCommand, ListSchedulesResponse, Schedule } from "../../../shared/contract/index.js";
import { forEachBounded } from "../../../shared/runtime/index.js";
import { businessSchedulesPrefix, publicSchedule } from "./schedule-record.js";
import type { Schedules } from "./schedule-store.js";

const PARALLEL_READS = 8;

/**
 * The business's schedules, newest first (ids sort by creation time), a page at a time:
 * the keys under the business's prefix, then only the page's records read.
 */
export function listSchedules(schedules: Schedules) {
  return async ({ caller, body }: z.infer<typeof ListSchedulesCommand>): Promise<ListSchedulesResponse> => {
    const prefix = businessSchedulesPrefix(caller.app_id, caller.business_id);
    const ids = (await schedules.keys(`${prefix}*`))
      .map((key) => key.slice(prefix.length))
      .filter((id) => body.cursor === undefined || id < body.cursor)
      .sort()
      .reverse();
    const items: Schedule[] = [];
    let next = 0;
    // A key deleted since the listing leaves a marker: read on until the page is full or the keys run out.
    while (items.length < body.limit && next < ids.length) {
      const batch = ids.slice(next, next + body.limit - items.length);
      next += batch.length;
      const read = new Map<string, Schedule>();
      await forEachBounded(batch, PARALLEL_READS, async (id) => {
        const stored = await schedules.get(`${prefix}${id}`);
        if (stored) read.set(id, publicSchedule(stored.value));
      });
      for (const id of batch) {
        const schedule = read.get(id);
        if (schedule) items.push(schedule);
      }
    }
    const last = items[items.length - 1];
    return { items, next_cursor: items.length === body.limit && next < ids.length && last ? last.schedule_id : null };
  };
}
