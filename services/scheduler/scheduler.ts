import { queueGroups } from "../../shared/nats/index.js";
import { type ServiceDeps, type ServiceRun, serviceLifecycle } from "../../shared/process/index.js";
import { Coalesced, type Service } from "../../shared/runtime/index.js";
import type { SchedulerConfig } from "./config.js";
import { cancelJob } from "./jobs/cancel-job.js";
import { deleteJob } from "./jobs/delete-job.js";
import { poll } from "./jobs/poll.js";
import { recordResult } from "./jobs/record-result.js";
import { retrieveJob } from "./jobs/retrieve-job.js";
import { retryJob } from "./jobs/retry-job.js";
import { submitJob } from "./jobs/submit-job.js";
import { JobListIndex } from "./listing/job-list-index.js";
import { listJobs, serveListShard } from "./listing/list-jobs.js";
import { followOwnedPartitions } from "./partitions/follow-partitions.js";
import { JobsWatch } from "./partitions/jobs-watch.js";
import { migrateLegacyJobKeys } from "./partitions/migrate-job-keys.js";
import { PartitionOwnership } from "./partitions/partition-ownership.js";
import { ClusterView } from "./placement/cluster-view.js";
import { AllocationWriter } from "./placement/reservations.js";
import { PlacementLoop } from "./placement/placement-loop.js";
import { ActiveJobs } from "./queue/active-jobs.js";
import { serveConcurrencyCounts } from "./queue/concurrency-counts.js";
import { recheckWaitingJobs, settleChildrenOf } from "./queue/dependency-resolution.js";
import { QueueDepthGuard } from "./queue/job-queue.js";
import { QueuedJobs } from "./queue/queued-jobs.js";
import { QueueDeadlines } from "./queue/queue-timeout.js";
import { WaitingJobs } from "./queue/waiting-jobs.js";
import type { SchedulerContext } from "./scheduler-context.js";
import { reportAtScrape } from "./scheduler-reporting.js";
import { openSchedulerStore } from "./scheduler-store.js";
import { createSchedule } from "./schedules/create-schedule.js";
import { deleteSchedule } from "./schedules/delete-schedule.js";
import { listSchedules } from "./schedules/list-schedules.js";
import { retrieveSchedule } from "./schedules/retrieve-schedule.js";
import { ScheduleFiring } from "./schedules/schedule-firing.js";
import { schedulePartitionOfKey } from "./schedules/schedule-record.js";
import { openSchedules, type Schedules } from "./schedules/schedule-store.js";
import { setScheduleState } from "./schedules/set-schedule-state.js";
import { FinishedJobs } from "./upkeep/finished-jobs.js";
import { upkeepPasses } from "./upkeep/upkeep-passes.js";

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
  let ownership: PartitionOwnership | undefined;
  let stopReporting = (): void => undefined;
  const timers: NodeJS.Timeout[] = [];
  let scheduleFiring: ScheduleFiring | undefined;
  // A job with a concurrency key that ended frees a place of its key: the next of the key starts at once.
  const active = new ActiveJobs(
    config.CJS_SHARED_OPERATOR_POOLS,
    () => requestPlacement(),
    (partition) => ownership?.owned.has(partition) ?? false,
  );
  // The owner of a job that ended settles the jobs waiting for it; each step is a compare-and-set, and the repair pass covers a lost one.
  const waiting = new WaitingJobs((parentKey, end, dependents) => {
    if (stopped || !ctx) return;
    void settleChildrenOf(ctx, waiting, parentKey, end, dependents).catch((error: unknown) =>
      logger.warn(
        { err: error, job_key: parentKey },
        "settling the jobs waiting for a job failed; the repair pass tries again",
      ),
    );
  });
  // A job joining the queue asks for a round.
  const queued = new QueuedJobs(
    () => requestPlacement(),
    config.CJS_SHARED_OPERATOR_POOLS,
    () => deps.clock.now(),
  );
  const listIndex = new JobListIndex();
  const finished = new FinishedJobs();
  const queueDeadlines = new QueueDeadlines();
  let jobsWatch: JobsWatch | undefined;
  let ctx: SchedulerContext | undefined;
  let stopped = false;
  const owns = (partition: number) => ownership?.owned.has(partition) ?? false;

  // Placing needs the whole picture of the owned partitions' queue: the watch has read them all.
  const placement = new PlacementLoop({
    logger,
    clock: deps.clock,
    queued,
    context: () => ctx,
    mayPlace: () => !stopped && jobsWatch?.ready === true && jobsWatch.partitions.size > 0,
  });
  const requestPlacement = (): void => placement.request();

  const { reconciling, repairing, sweeping } = upkeepPasses({
    logger,
    context: () => ctx,
    stopped: () => stopped,
    owns,
    active,
    waiting,
    finished,
    queueDeadlines,
    wake: placement.wake,
  });

  /** The partitions this replica owns changed: watch them, then place and settle what they hold. */
  const follow = new Coalesced(async () => {
    const watch = jobsWatch;
    if (!watch || !ownership || stopped) return;
    const owner = ownership;
    const followed = await followOwnedPartitions(
      watch,
      () => owner.owned,
      () => stopped,
      logger,
    );
    if (!followed || !ctx) return;
    requestPlacement();
    // Parents that ended while nobody owned them: their waiting jobs are settled now, not at the next sweep.
    if (waiting.size > 0)
      await recheckWaitingJobs(ctx, waiting).catch((error: unknown) =>
        logger.warn({ err: error }, "re-checking the waiting jobs failed; the repair pass tries again"),
      );
  });

  const lifecycle = serviceLifecycle({
    name: SERVICE,
    nc,
    logger,
    queue: queueGroups.scheduler,
    async start(run) {
      const { instance } = run;
      const store = await openSchedulerStore(nc, config, logger);
      await migrateLegacyJobKeys(store, instance, logger);
      jobsWatch = new JobsWatch(store, [active, queued, listIndex, finished, queueDeadlines, waiting], logger);
      const view = new ClusterView(store, requestPlacement, config.CJS_SHARED_OPERATOR_POOLS);
      ownership = new PartitionOwnership(
        store.leases,
        instance,
        config.CJS_PARTITION_LEASE_MS,
        logger,
        () => void follow.run(),
        () => ({ queued: queued.size }),
      );
      const owner = ownership;
      const context: SchedulerContext = {
        ...deps,
        instance,
        store,
        queueDepth: new QueueDepthGuard(queued, config.CJS_JOB_QUEUE_MAX_MESSAGES, () => owner.othersQueued()),
        view,
        allocations: new AllocationWriter(store, view),
        jobsWatch,
        concurrency: active,
        active,
        ownership,
        requestPlacement,
      };
      ctx = context;
      const scheduleBucket = await openSchedules(nc, config, logger);
      await context.view.start();
      serveScheduler(run, context, listIndex, scheduleBucket, queued);
      await ownership.start();
      // Ready once the partitions this replica holds at start have been read: a request served now sees them.
      await follow.run();
      stopReporting = reportAtScrape(context, queued, active, owner);
      timers.push(
        setInterval(() => void reconciling.run(), config.CJS_RECONCILE_INTERVAL_MS),
        setInterval(() => void repairing.run(), config.CJS_REPAIR_INTERVAL_MS),
        setInterval(() => void sweeping.run(), config.CJS_RETENTION_SWEEP_INTERVAL_MS),
      );
      scheduleFiring = new ScheduleFiring(context, scheduleBucket, logger, (key) => owns(schedulePartitionOfKey(key)));
      await scheduleFiring.start();
      requestPlacement();
    },
    async stop() {
      stopped = true;
      for (const timer of timers) clearInterval(timer);
      placement.stop();
      // Give the partitions up first, so the other replicas take them within one renewal.
      await ownership?.stop();
      stopReporting();
      await placement.idle();
      await sweeping.idle();
      await scheduleFiring?.stop();
      jobsWatch?.stop();
      ctx?.view.stop();
    },
  });
  return {
    ...lifecycle,
    reconcileNow: () => reconciling.run(),
    repairNow: () => repairing.run(),
    async sweepRetentionNow() {
      if (!ctx || stopped || jobsWatch?.partitions.size === 0) return false;
      await sweeping.run();
      return true;
    },
    ownedPartitions: () => ownership?.owned ?? new Set(),
  };
}

/** The scheduler's RPCs: jobs, their lists (this replica's part too), schedules and the node plane's poll and result. */
function serveScheduler(
  run: ServiceRun,
  context: SchedulerContext,
  listIndex: JobListIndex,
  scheduleBucket: Schedules,
  queued: QueuedJobs,
): void {
  run.serve("jobSubmit", submitJob(context));
  run.serve("jobRetrieve", retrieveJob(context));
  run.serve("jobList", listJobs(context, listIndex));
  run.keep(serveListShard(context, listIndex));
  run.keep(serveConcurrencyCounts(context));
  run.serve("jobCancel", cancelJob(context));
  run.serve("jobRetry", retryJob(context));
  run.serve("jobDelete", deleteJob(context));
  run.serve("scheduleCreate", createSchedule(context, scheduleBucket));
  run.serve("scheduleList", listSchedules(scheduleBucket));
  run.serve("scheduleRetrieve", retrieveSchedule(scheduleBucket));
  run.serve("schedulePause", setScheduleState(context, scheduleBucket, "paused"));
  run.serve("scheduleResume", setScheduleState(context, scheduleBucket, "active"));
  run.serve("scheduleDelete", deleteSchedule(scheduleBucket));
  run.serve("nodePoll", poll(context));
  run.serve("nodeResult", recordResult(context, queued));
}
