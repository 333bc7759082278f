import { DeferredStarts } from "./jobs/deferred-starts.js";
import { writeStart } from "./jobs/poll.js";
import type { ServiceDeps } from "../../shared/process/index.js";
import type { SchedulerConfig } from "./config.js";
import { JobsWatch } from "./partitions/jobs-watch.js";
import { migrateLegacyJobKeys } from "./partitions/migrate-job-keys.js";
import { PartitionOwnership } from "./partitions/partition-ownership.js";
import { OwnShare } from "./placement/own-share.js";
import { ClusterView } from "./placement/cluster-view.js";
import { AllocationWriter } from "./placement/reservations.js";
import { QueueDepthGuard } from "./queue/job-queue.js";
import { type ReplicaParts, watchedParts } from "./replica-parts.js";
import type { SchedulerContext } from "./scheduler-context.js";
import { openSchedulerStore } from "./scheduler-store.js";
import { openSchedules, type Schedules } from "./schedules/schedule-store.js";

/** What a replica works from once started; nothing is watched or owned yet. */
export interface OpenedReplica {
  context: SchedulerContext;
  jobsWatch: JobsWatch;
  ownership: PartitionOwnership;
  schedules: Schedules;
}

/**
 * Opens the buckets (moving job keys of an earlier layout first), builds the watch of the
 * partitions to come, the view of every node (started: placing needs it) and the ownership
 * (not started: the caller serves its RPCs first).
 */
export async function openReplica(
  deps: ServiceDeps<SchedulerConfig>,
  instance: string,
  parts: ReplicaParts,
  hooks: { requestPlacement(): void; ownershipChanged(): void },
): Promise<OpenedReplica> {
  const { nc, config, logger } = deps;
  const store = await openSchedulerStore(nc, config, logger);
  await migrateLegacyJobKeys(store, instance, logger);
  const jobsWatch = new JobsWatch(store, watchedParts(parts), logger);
  // The replica's own job writes reach its pictures at once (a submit is placed without waiting for its echo).
  store.jobs.onWritten = (key, revision, record, bytes) =>
    jobsWatch.noteWritten(key, revision, record as unknown as Record<string, unknown>, bytes);
  const view = new ClusterView(store, hooks.requestPlacement, config.CJS_SHARED_OPERATOR_POOLS, logger);
  const ownership = new PartitionOwnership(
    store.leases,
    instance,
    config.CJS_PARTITION_LEASE_MS,
    logger,
    hooks.ownershipChanged,
    () => ({ queued: parts.queued.size }),
  );
  const context: SchedulerContext = {
    ...deps,
    instance,
    store,
    queueDepth: new QueueDepthGuard(parts.queued, config.CJS_JOB_QUEUE_MAX_MESSAGES, () => ownership.othersQueued()),
    view,
    allocations: new AllocationWriter(store, view),
    ownShare: new OwnShare(instance),
    jobsWatch,
    concurrency: parts.active,
    active: parts.active,
    ownership,
    starts: new DeferredStarts(config.CJS_START_WRITE_DELAY_MS, (jobKey, start) => writeStart(context, jobKey, start)),
    requestPlacement: hooks.requestPlacement,
  };
  const schedules = await openSchedules(nc, config, logger);
  await view.start();
  return { context, jobsWatch, ownership, schedules };
}
