import { setTimeout as delay } from "node:timers/promises";
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
import { JobsWatch } from "./partitions/jobs-watch.js";
import { migrateLegacyJobKeys } from "./partitions/migrate-job-keys.js";
import { PartitionOwnership } from "./partitions/partition-ownership.js";
import { ClusterView } from "./placement/cluster-view.js";
import { type PlacementRound, placeOnce } from "./placement/placer.js";
import { AllocationWriter } from "./placement/reservations.js";
import { WakeTimer } from "./placement/wake-timer.js";
import { ActiveJobs } from "./queue/active-jobs.js";
import { serveConcurrencyCounts } from "./queue/concurrency-counts.js";
import { recheckWaitingJobs, settleChildrenOf } from "./queue/dependency-resolution.js";
import { QueueDepthGuard } from "./queue/job-queue.js";
import { QueuedJobs } from "./queue/queued-jobs.js";
import { expireQueuedOnce, QueueDeadlines } from "./queue/queue-timeout.js";
import { WaitingJobs } from "./queue/waiting-jobs.js";
import type { SchedulerContext } from "./scheduler-context.js";
import { partitionGauges, retentionDue, schedulerSnapshots } from "./scheduler-metrics.js";
import { takeSnapshot } from "./scheduler-snapshot.js";
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
import { reconcileOnce } from "./upkeep/reconciler.js";
import { repairOnce } from "./upkeep/repair-sweep.js";
import { sweepRetentionOnce } from "./upkeep/retention-sweep.js";

const SERVICE = "scheduler";
/** The first and the longest wait before asking again for a partition watch the server refused. */
const FOLLOW_RETRY_FIRST_MS = 100;
const FOLLOW_RETRY_MAX_MS = 5_000;

/** The wait before planning again after `rounds` fruitless rounds in a row: 10 ms doubling to 1 s. */
function retryBackoffMs(rounds: number): number {
  return Math.min(1000, 10 * 2 ** (rounds - 1));
}

function earliest(...times: Array<number | null>): number | null {
  const known = times.filter((time): time is number => time !== null);
  return known.length === 0 ? null : Math.min(...known);
}

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

  /** Rounds in a row that failed or lost every placement: the next one waits a bounded backoff, never a tick. */
  let fruitless = 0;
  /** Wakes a round when a job's run_at or backoff ends, a capped node gets room, or after a failed round. */
  const wake = new WakeTimer(deps.clock, () => requestPlacement());
  // Placement rounds never overlap; requests during a round coalesce into one more round.
  const placing = new Coalesced(async () => {
    const context = ctx;
    if (!context) return;
    for (let again = true; again && !stopped && jobsWatch?.ready; ) {
      const round = await placeOnce(context, queued).catch((error: unknown): PlacementRound => {
        logger.warn({ err: error }, "placement round failed; planning again after a short backoff");
        // Nothing announces that the broker is back: try again soon.
        return { placed: 0, again: false, wakeAt: null, lost: true };
      });
      fruitless = round.lost && round.placed === 0 ? fruitless + 1 : 0;
      const retryAt = fruitless > 0 ? context.clock.now() + retryBackoffMs(fruitless) : null;
      wake.arm(earliest(round.wakeAt, queued.nextDueAt(), retryAt));
      again = round.again;
    }
  });
  // Only from a whole picture of the owned partitions' queue: placing from half of it would break the queue's order.
  const requestPlacement = (): void => {
    if (stopped || !ctx || !jobsWatch?.ready || jobsWatch.partitions.size === 0) return;
    void placing.run();
  };

  const reconciling = new Coalesced(async () => {
    if (!ctx) return;
    // A clock moved by hand (tests) is seen here; the timer covers real time.
    wake.due();
    try {
      await reconcileOnce(ctx, owns, active);
      await expireQueuedOnce(ctx, queueDeadlines);
    } catch (error) {
      logger.warn({ err: error }, "reconcile pass failed");
    }
  });

  const repairing = new Coalesced(async () => {
    if (!ctx) return;
    try {
      await repairOnce(ctx, active);
      if (waiting.size > 0) await recheckWaitingJobs(ctx, waiting);
    } catch (error) {
      logger.warn({ err: error }, "repair sweep failed");
    }
  });

  // Each replica deletes the expired jobs of its own partitions, so two never race over the same jobs.
  const sweeping = new Coalesced(async () => {
    const context = ctx;
    if (!context || stopped || jobsWatch?.partitions.size === 0) {
      retentionDue.set(0);
      return;
    }
    try {
      // Decide on every record written before the pass began, whichever replica wrote it.
      await context.jobsWatch.caughtUp();
      const pass = await sweepRetentionOnce(context, finished);
      logger.info(
        {
          deleted_jobs: pass.deletedJobs,
          deleted_artifacts: pass.artifacts,
          deleted_log_messages: pass.logMessages,
          due_left: pass.dueLeft,
          finished_jobs: finished.size,
        },
        "retention sweep",
      );
    } catch (error) {
      logger.warn({ err: error }, "retention sweep failed; the next one tries again");
    }
  });

  /** The partitions this replica owns changed: watch them, then place and settle what they hold. */
  const follow = new Coalesced(async () => {
    const watch = jobsWatch;
    if (!watch || !ownership || stopped) return;
    // A consumer that cannot be made now (a NATS node lost, a leader being elected) is asked for again with a
    // bounded backoff: placement waits for the watch, so nothing else would ever try again.
    for (let retryMs = FOLLOW_RETRY_FIRST_MS; ; retryMs = Math.min(retryMs * 2, FOLLOW_RETRY_MAX_MS)) {
      const followed = await watch.follow(ownership.owned).then(
        () => true,
        (error: unknown) => {
          logger.warn({ err: error, retry_in_ms: retryMs }, "could not watch this replica's partitions; trying again");
          return false;
        },
      );
      if (followed) break;
      await delay(retryMs, undefined, { ref: false });
      if (stopped) return;
    }
    await watch.whenReady();
    if (stopped || !ctx) return;
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
      // Each replica reports its own partitions' jobs (sum them across replicas) and every node; at scrape time, never on the job path.
      stopReporting = schedulerSnapshots.reportFrom(() => {
        const nowMs = context.clock.now();
        return takeSnapshot({
          queued: queued.jobs(),
          active: active.jobs.values(),
          nodes: context.view.nodeViews(nowMs),
          nowMs,
        });
      });
      const stopGauges = partitionGauges.reportFrom(() => ({
        owned: owner.owned.size,
        unowned: owner.unowned().length,
        queued: queued.size,
      }));
      const stopSnapshots = stopReporting;
      stopReporting = () => {
        stopSnapshots();
        stopGauges();
      };
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
      wake.stop();
      // Give the partitions up first, so the other replicas take them within one renewal.
      await ownership?.stop();
      stopReporting();
      await placing.idle();
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
