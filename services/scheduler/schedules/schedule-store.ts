import type { NatsConnection } from "@nats-io/transport-node";
import { BUCKETS, ensureBuckets, JsonBucket } from "../../../shared/nats/index.js";
import type { Logger } from "../../../shared/runtime/index.js";
import type { SchedulerConfig } from "../config.js";
import { ScheduleRecord } from "./schedule-record.js";

/** The schedule bucket, replicated like the job bucket. */
export async function openSchedules(
  nc: NatsConnection,
  config: Readonly<SchedulerConfig>,
  logger: Logger,
): Promise<Schedules> {
  const kv = await ensureBuckets(nc, [BUCKETS.schedules], { replicas: config.CJS_NATS_REPLICAS, logger });
  return new JsonBucket(kv[BUCKETS.schedules], ScheduleRecord);
}

export type Schedules = JsonBucket<typeof ScheduleRecord>;
