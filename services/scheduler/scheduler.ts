import { randomUUID } from "node:crypto";
import type { Subscription } from "@nats-io/transport-node";
import {
  JobRefCommand,
  JobResultCommand,
  ListJobsCommand,
  PollCommand,
  SubmitJobCommand,
} from "../../shared/contract/index.js";
import { CreateScheduleCommand, ListSchedulesCommand, ScheduleRefCommand } from "../../shared/contract/index.js";
import { queueGroups, serveRpc, servePing, subjects } from "../../shared/nats/index.js";
import type { ServiceDeps } from "../../shared/process/index.js";
import type { Service } from "../../shared/runtime/index.js";
import { cancelJob } from "./jobs/cancel-job.js";
import { deleteJob } from "./jobs/delete-job.js";
import { recheckWaitingJobs, settleChildrenOf } from "./queue/dependency-resolution.js";
import { FinishedJobs } from "./upkeep/finished-jobs.js";
import { ActiveJobs } from "./queue/active-jobs.js";
import { JobListIndex } from "./listing/job-list-index.js";
import { JobsWatch } from "./partitions/jobs-watch.js";
import { ClusterView } from "./placement/cluster-view.js";
import { QueueDepthGuard } from "./queue/job-queue.js";
import type { SchedulerConfig } from "./config.js";
import { listJobs } from "./listing/list-jobs.js";
import { PlacementLease } from "./partitions/placement-lease.js";
import { placeOnce, type PlacementRound } from "./placement/placer.js";
import { poll } from "./jobs/poll.js";
import { QueuedJobs } from "./queue/queued-jobs.js";
import { expireQueuedOnce, QueueDeadlines } from "./queue/queue-timeout.js";
import { reconcileOnce } from "./upkeep/reconciler.js";
import { repairOnce } from "./upkeep/repair-sweep.js";
import { recordResult } from "./jobs/record-result.js";
import { retrieveJob } from "./jobs/retrieve-job.js";
import { sweepRetentionOnce } from "./upkeep/retention-sweep.js";
import { retryJob } from "./jobs/retry-job.js";
import type { SchedulerContext } from "./scheduler-context.js";
import { AllocationWriter } from "./placement/reservations.js";
import { retentionDue, schedulerSnapshots } from "./scheduler-metrics.js";
import { takeSnapshot } from "./scheduler-snapshot.js";
import { WaitingJobs } from "./queue/waiting-jobs.js";
import { WakeTimer } from "./placement/wake-timer.js";
import { openSchedulerStore } from "./scheduler-store.js";
import { submitJob } from "./jobs/submit-job.js";
import { createSchedule } from "./schedules/create-schedule.js";
import { deleteSchedule } from "./schedules/delete-schedule.js";
import { listSchedules } from "./schedules/list-schedules.js";
import { setScheduleState } from "./schedules/set-schedule-state.js";
import { retrieveSchedule } from "./schedules/retrieve-schedule.js";
import { ScheduleFiring } from "./schedules/schedule-firing.js";
import { openSchedules } from "./schedules/schedule-store.js";

const SERVICE = "scheduler";

/** The wait before planning again after `rounds` fruitless rounds in a row: 10 ms doubling to 1 s. */
function retryBackoffMs(rounds: number): number {
  return Math.min(1000, 10 * 2 ** (rounds - 1));
}

function earliest(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null ? a : Math.min(a, b);
}

export interface Scheduler extends Service {
  /** Runs one reconcile pass now (tests drive time with an injected clock). */
  reconcileNow(): Promise<void>;
  /** Runs one repair sweep now. */
  repairNow(): Promise<void>;
  /** Runs one retention sweep now if this replica holds the placement lease; false when it does not (another replica sweeps). */
  sweepRetentionNow(): Promise<boolean>;
}

/**
 * Builds the scheduler, the owner of jobs: it keeps the queue from its watch of the job
 * bucket, places queued jobs on nodes while it holds the placement lease, and answers the
 * job RPCs and the node plane's poll and result; the lease holder also deletes finished
 * jobs past their plan's retention. Every replica answers RPCs and runs the
 * reconcile and repair loops; compare-and-set on the records keeps them from ever both
 * winning one job or one slot.
 */
export function buildScheduler(deps: ServiceDeps<SchedulerConfig>): Scheduler {
  const { nc, logger, config } = deps;
  const instance = randomUUID();
  const subscriptions: Subscription[] = [];
  let lease: PlacementLease | undefined;
  let stopReporting = (): void => undefined;
  let reconcileTimer: NodeJS.Timeout | undefined;
  let repairTimer: NodeJS.Timeout | undefined;
  let retentionTimer: NodeJS.Timeout | undefined;
  let scheduleFiring: ScheduleFiring | undefined;
  // A job with a concurrency key that ended frees a place of its key: the next of the key starts at once.
  const active = new ActiveJobs(config.CJS_SHARED_OPERATOR_POOLS, () => requestPlacement());
  // The placing replica settles the jobs waiting for one that ended; each step is a compare-and-set, and the repair pass covers a lost one.
  const waiting = new WaitingJobs((parentKey, end) => {
    if (stopped || !ctx || !lease?.leading) return;
    void settleChildrenOf(ctx, waiting, parentKey, end).catch((error: unknown) =>
      logger.warn(
        { err: error, job_key: parentKey },
        "settling the jobs waiting for a job failed; the repair pass tries again",
      ),
    );
  });
  // A job joining the queue asks for a round; only the lease holder's rounds place.
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
  let started = false;
  let stopped = false;

  // Placement rounds never overlap; requests during a round coalesce into one more round.
  let placing: Promise<void> | undefined;
  let placeAgain = false;
  /** Rounds in a row that failed or lost every placement: the next one waits a bounded backoff, never a tick. */
  let fruitless = 0;
  /** Wakes a round when a job's run_at or backoff ends, a capped node gets room, or after a failed round. */
  const wake = new WakeTimer(deps.clock, () => requestPlacement());
  const requestPlacement = (): void => {
    if (stopped || !ctx || !lease?.leading) return;
    if (placing) {
      placeAgain = true;
      return;
    }
    const context = ctx;
    placing = (async () => {
      do {
        placeAgain = false;
        const round = await placeOnce(context, queued).catch((error: unknown): PlacementRound => {
          logger.warn({ err: error }, "placement round failed; planning again after a short backoff");
          // Nothing announces that the broker is back (the lease may never have lapsed): try again soon.
          return { placed: 0, again: false, wakeAt: null, lost: true };
        });
        fruitless = round.lost && round.placed === 0 ? fruitless + 1 : 0;
        const retryAt = fruitless > 0 ? context.clock.now() + retryBackoffMs(fruitless) : null;
        wake.arm(earliest(earliest(round.wakeAt, queued.nextDueAt()), retryAt));
        if (round.again) placeAgain = true;
      } while (placeAgain && !stopped && lease?.leading);
    })().finally(() => {
      placing = undefined;
    });
  };

  let reconciling = false;
  const reconcile = async (): Promise<void> => {
    if (!ctx || reconciling) return;
    // A clock moved by hand (tests) is seen here; the timer covers real time.
    wake.due();
    reconciling = true;
    try {
      await reconcileOnce(ctx);
      // The placing replica knows the whole queue; one replica expiring saves the others a refused write each.
      if (lease?.leading) await expireQueuedOnce(ctx, queueDeadlines);
    } catch (error) {
      logger.warn({ err: error }, "reconcile pass failed");
    } finally {
      reconciling = false;
    }
  };

  let repairing = false;
  const repair = async (): Promise<void> => {
    if (!ctx || repairing) return;
    repairing = true;
    try {
      await repairOnce(ctx, active);
      if (lease?.leading && waiting.size > 0) await recheckWaitingJobs(ctx, waiting);
    } catch (error) {
      logger.warn({ err: error }, "repair sweep failed");
    } finally {
      repairing = false;
    }
  };

  // One replica at a time deletes expired jobs: the one that places (the placement lease), so two never race over the same jobs.
  let sweeping: Promise<boolean> | undefined;
  const sweepRetention = (): Promise<boolean> => {
    if (!ctx || stopped || !lease?.leading) {
      // Only the sweeping replica reports a backlog: one that lost the lease stops reporting its last.
      retentionDue.set(0);
      return Promise.resolve(false);
    }
    const context = ctx;
    sweeping ??= (async () => {
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
      return true;
    })().finally(() => {
      sweeping = undefined;
    });
    return sweeping;
  };

  return {
    name: SERVICE,
    async start() {
      const store = await openSchedulerStore(nc, config, logger);
      jobsWatch = new JobsWatch(store, [active, queued, listIndex, finished, queueDeadlines, waiting], logger);
      const view = new ClusterView(store, requestPlacement, config.CJS_SHARED_OPERATOR_POOLS);
      const context: SchedulerContext = {
        ...deps,
        store,
        queueDepth: new QueueDepthGuard(queued, config.CJS_JOB_QUEUE_MAX_MESSAGES),
        view,
        allocations: new AllocationWriter(store, view),
        jobsWatch,
        concurrency: active,
        requestPlacement,
      };
      ctx = context;
      const scheduleBucket = await openSchedules(nc, config, logger);
      await context.view.start();
      await jobsWatch.start();
      const rpc = { queue: queueGroups.scheduler, logger };
      subscriptions.push(
        servePing(nc, { service: SERVICE, instance, logger }),
        serveRpc(nc, { ...rpc, subject: subjects.jobSubmit(), request: SubmitJobCommand, handle: submitJob(context) }),
        serveRpc(nc, { ...rpc, subject: subjects.jobRetrieve(), request: JobRefCommand, handle: retrieveJob(context) }),
        serveRpc(nc, {
          ...rpc,
          subject: subjects.jobList(),
          request: ListJobsCommand,
          handle: listJobs(context, listIndex),
        }),
        serveRpc(nc, { ...rpc, subject: subjects.jobCancel(), request: JobRefCommand, handle: cancelJob(context) }),
        serveRpc(nc, { ...rpc, subject: subjects.jobRetry(), request: JobRefCommand, handle: retryJob(context) }),
        serveRpc(nc, { ...rpc, subject: subjects.jobDelete(), request: JobRefCommand, handle: deleteJob(context) }),
        serveRpc(nc, {
          ...rpc,
          subject: subjects.scheduleCreate(),
          request: CreateScheduleCommand,
          handle: createSchedule(context, scheduleBucket),
        }),
        serveRpc(nc, {
          ...rpc,
          subject: subjects.scheduleList(),
          request: ListSchedulesCommand,
          handle: listSchedules(scheduleBucket),
        }),
        serveRpc(nc, {
          ...rpc,
          subject: subjects.scheduleRetrieve(),
          request: ScheduleRefCommand,
          handle: retrieveSchedule(scheduleBucket),
        }),
        serveRpc(nc, {
          ...rpc,
          subject: subjects.schedulePause(),
          request: ScheduleRefCommand,
          handle: setScheduleState(context, scheduleBucket, "paused"),
        }),
        serveRpc(nc, {
          ...rpc,
          subject: subjects.scheduleResume(),
          request: ScheduleRefCommand,
          handle: setScheduleState(context, scheduleBucket, "active"),
        }),
        serveRpc(nc, {
          ...rpc,
          subject: subjects.scheduleDelete(),
          request: ScheduleRefCommand,
          handle: deleteSchedule(scheduleBucket),
        }),
        serveRpc(nc, { ...rpc, subject: subjects.nodePoll(), request: PollCommand, handle: poll(context) }),
        serveRpc(nc, {
          ...rpc,
          subject: subjects.nodeResult(),
          request: JobResultCommand,
          handle: recordResult(context),
        }),
      );
      // Place only from a whole picture of the queue: the watch has brought every record the bucket held.
      while (!(await jobsWatch.caughtUp()))
        logger.info({ revisions_read: jobsWatch.seen }, "still reading the job records before placing");
      lease = new PlacementLease(store.leases, instance, config.CJS_PLACEMENT_LEASE_MS, logger, (leading) => {
        if (leading) {
          requestPlacement();
          // Parents that ended while no replica held the lease: their waiting jobs are settled now, not at the next sweep.
          if (ctx && waiting.size > 0)
            void recheckWaitingJobs(ctx, waiting).catch((error: unknown) =>
              logger.warn({ err: error }, "re-checking the waiting jobs failed; the repair pass tries again"),
            );
        }
      });
      lease.start();
      // Every replica reports the same values from the records; counted at scrape time, never on the job path.
      stopReporting = schedulerSnapshots.reportFrom(() => {
        const nowMs = context.clock.now();
        return takeSnapshot({
          queued: queued.jobs(),
          active: active.jobs.values(),
          nodes: context.view.nodeViews(nowMs),
          nowMs,
        });
      });
      reconcileTimer = setInterval(() => void reconcile(), config.CJS_RECONCILE_INTERVAL_MS);
      repairTimer = setInterval(() => void repair(), config.CJS_REPAIR_INTERVAL_MS);
      retentionTimer = setInterval(() => void sweepRetention(), config.CJS_RETENTION_SWEEP_INTERVAL_MS);
      scheduleFiring = new ScheduleFiring(context, scheduleBucket, logger, () => lease?.leading ?? false);
      await scheduleFiring.start();
      await nc.flush();
      started = true;
      requestPlacement();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(reconcileTimer);
      clearInterval(repairTimer);
      clearInterval(retentionTimer);
      wake.stop();
      // Give the lease up first, so another replica places within one renewal.
      await lease?.stop();
      stopReporting();
      await placing;
      await sweeping;
      await scheduleFiring?.stop();
      jobsWatch?.stop();
      ctx?.view.stop();
      await Promise.all(subscriptions.map((subscription) => subscription.drain()));
    },
    ready: () => started && !stopped,
    reconcileNow: reconcile,
    repairNow: repair,
    sweepRetentionNow: sweepRetention,
  };
}
