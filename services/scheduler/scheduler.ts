import { queueGroups } from "../../shared/nats/index.js";
import { type ServiceDeps, serviceLifecycle } from "../../shared/process/index.js";
import { Coalesced, type Service } from "../../shared/runtime/index.js";
import type { SchedulerConfig } from "./config.js";
import { followOwnedPartitions } from "./partitions/follow-partitions.js";
import { PartitionRpcs } from "./partitions/partition-rpcs.js";
import { PlacementLoop } from "./placement/placement-loop.js";
import { recheckWaitingJobs } from "./queue/dependency-resolution.js";
import { type OpenedReplica, openReplica } from "./open-replica.js";
import { replicaParts } from "./replica-parts.js";
import { reportAtScrape } from "./scheduler-reporting.js";
import { ScheduleFiring } from "./schedules/schedule-firing.js";
import { schedulePartitionOfKey } from "./schedules/schedule-record.js";
import { serveScheduler } from "./serve-scheduler.js";
import { runUpkeepEvery, upkeepPasses } from "./upkeep/upkeep-passes.js";

const SERVICE = "scheduler";

export interface Scheduler extends Service {
  /** Runs one reconcile pass now (tests drive time with an injected clock). */
  reconcileNow(): Promise<void>;
  /** Runs one repair sweep now. */
  repairNow(): Promise<void>;
  /** Runs one retention sweep now over this replica's partitions; false when it owns none. */
  sweepRetentionNow(): Promise<boolean>;
  /** The job partitions this replica owns now. */
  ownedPartitions(): ReadonlySet<number>;
}

/**
 * Builds the scheduler, the owner of jobs. Jobs are spread over partitions
 * (`JOB_PARTITIONS`) and each replica owns some by lease (`PartitionOwnership`): it
 * watches only their records, keeps their queue, places their jobs, times them out,
 * settles their dependencies, fires their schedules and deletes them past their
 * retention. Every replica answers every RPC (submit, retrieve, cancel, the node plane's
 * poll and result) and sees every node. A replica added takes its share of the
 * partitions; one that stops hands them on at once, one that dies within a lease.
 * Compare-and-set on the records keeps two replicas from ever both winning one job or one
 * slot, so a moment of two owners wastes writes and nothing else.
 */
export function buildScheduler(deps: ServiceDeps<SchedulerConfig>): Scheduler {
  const { nc, logger, config } = deps;
  let replica: OpenedReplica | undefined;
  let partitionRpcs: PartitionRpcs | undefined;
  let scheduleFiring: ScheduleFiring | undefined;
  let stopped = false;
  let stopTimers = (): void => undefined;
  let stopReporting = (): void => undefined;
  const context = () => replica?.context;
  const owns = (partition: number) => replica?.ownership.owned.has(partition) ?? false;
  const requestPlacement = (): void => placement.request();
  const parts = replicaParts({
    config,
    clock: deps.clock,
    logger,
    requestPlacement,
    context,
    stopped: () => stopped,
  });
  // Placing needs the whole picture of the owned partitions' queue: the watch has read them all.
  const placement = new PlacementLoop({
    logger,
    clock: deps.clock,
    queued: parts.queued,
    context,
    mayPlace: () => !stopped && replica?.jobsWatch.ready === true && replica.jobsWatch.partitions.size > 0,
  });
  const upkeep = upkeepPasses({ logger, context, stopped: () => stopped, owns, ...parts, wake: placement.wake });

  /** The partitions this replica owns changed: watch them, then place and settle what they hold. */
  const follow = new Coalesced(async () => {
    if (!replica || stopped) return;
    const { jobsWatch, ownership, context: ctx } = replica;
    if (
      !(await followOwnedPartitions(
        jobsWatch,
        () => ownership.owned,
        () => stopped,
        logger,
      ))
    )
      return;
    partitionRpcs?.follow(ownership.owned);
    requestPlacement();
    // Parents that ended while nobody owned them: their waiting jobs are settled now, not at the next sweep.
    if (parts.waiting.size > 0)
      await recheckWaitingJobs(ctx, parts.waiting).catch((error: unknown) =>
        logger.warn({ err: error }, "re-checking the waiting jobs failed; the repair pass tries again"),
      );
  });

  const lifecycle = serviceLifecycle({
    name: SERVICE,
    nc,
    logger,
    queue: queueGroups.scheduler,
    async start(run) {
      const opened = await openReplica(deps, run.instance, parts, {
        requestPlacement,
        ownershipChanged: () => void follow.run(),
      });
      replica = opened;
      const handlers = serveScheduler(run, opened.context, parts.listIndex, opened.schedules, parts.queued);
      partitionRpcs = new PartitionRpcs(nc, queueGroups.scheduler, logger, handlers);
      await opened.ownership.start();
      // Ready once the partitions this replica holds at start have been read: a request served now sees them.
      await follow.run();
      stopReporting = reportAtScrape(opened.context, parts.queued, parts.active, opened.ownership);
      stopTimers = runUpkeepEvery(upkeep, config);
      scheduleFiring = new ScheduleFiring(opened.context, opened.schedules, logger, (key) =>
        owns(schedulePartitionOfKey(key)),
      );
      await scheduleFiring.start();
      requestPlacement();
    },
    async stop() {
      stopped = true;
      stopTimers();
      placement.stop();
      // Give the partitions up first, so the other replicas take them within one renewal.
      await replica?.ownership.stop();
      await partitionRpcs?.stop();
      stopReporting();
      await placement.idle();
      await upkeep.sweeping.idle();
      // Releases waiting to share a write go now rather than to the reconciler; held starts too.
      await replica?.context.allocations.flushSoon();
      await replica?.context.starts.flush();
      await scheduleFiring?.stop();
      await replica?.jobsWatch.stop();
      replica?.context.view.stop();
    },
  });
  return {
    ...lifecycle,
    reconcileNow: () => upkeep.reconciling.run(),
    repairNow: () => upkeep.repairing.run(),
    async sweepRetentionNow() {
      if (!replica || stopped || replica.jobsWatch.partitions.size === 0) return false;
      await upkeep.sweeping.run();
      return true;
    },
    ownedPartitions: () => replica?.ownership.owned ?? new Set(),
  };
}
