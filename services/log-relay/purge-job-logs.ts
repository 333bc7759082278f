import type { PurgeJobDataCommand, PurgeJobDataReply } from "../../shared/contract/index.js";
import { STREAMS, subjects } from "../../shared/nats/index.js";
import type { LogStore } from "./log-store.js";

/**
 * Removes every stored line of every attempt of a job, and its drop counts: asked by the
 * scheduler when the job is deleted (by its owner or by retention). A stream purge by
 * subject leaves no marker behind, so the stream shrinks at once; a purge of a job with no
 * lines removes nothing and is safe to repeat.
 */
export function purgeJobLogs(store: LogStore) {
  return async ({ job_id }: PurgeJobDataCommand): Promise<PurgeJobDataReply> => {
    const lines = await store.jsm.streams.purge(STREAMS.logs, { filter: subjects.jobLogsOfJob(job_id) });
    const drops = await store.jsm.streams.purge(STREAMS.logs, { filter: subjects.jobLogDrops(job_id) });
    return { deleted: lines.purged + drops.purged };
  };
}
