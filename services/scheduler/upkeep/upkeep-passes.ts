import type { Logger } from "../../../shared/runtime/index.js";
import { Coalesced } from "../../../shared/runtime/index.js";
import type { SchedulerConfig } from "../config.js";
import type { WakeTimer } from "../placement/wake-timer.js";
import type { ActiveJobs } from "../queue/active-jobs.js";
import { recheckWaitingJobs } from "../queue/dependency-resolution.js";
import { expireQueuedOnce, type QueueDeadlines } from "../queue/queue-timeout.js";
import type { WaitingJobs } from "../queue/waiting-jobs.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { retentionDue } from "../scheduler-metrics.js";
import type { FinishedJobs } from "./finished-jobs.js";
import { reconcileOnce } from "./reconciler.js";
import { repairOnce } from "./repair-sweep.js";
import { sweepRetentionOnce } from "./retention-sweep.js";

export interface UpkeepDeps {
  logger: Logger;
  /** The replica's context once started. */
  context: () => SchedulerContext | undefined;
  stopped: () => boolean;
  owns: (partition: number) => boolean;
  active: ActiveJobs;
  waiting: WaitingJobs;
  finished: FinishedJobs;
  queueDeadlines: QueueDeadlines;
  wake: WakeTimer;
}

/** The passes a replica runs on timers over its own partitions; each never overlaps itself (one more runs if asked meanwhile). */
export interface UpkeepPasses {
  /** Timeouts, lost nodes, queue deadlines, and a clock moved by hand. */
  reconciling: Coalesced;
  /** Revisions the watch skipped and dependencies left unsettled. */
  repairing: Coalesced;
  /** Expired jobs deleted with their logs and artifacts. */
  sweeping: Coalesced;
}

export function upkeepPasses(deps: UpkeepDeps): UpkeepPasses {
  const { logger } = deps;
  const reconciling = new Coalesced(async () => {
    const ctx = deps.context();
    if (!ctx) return;
    // A clock moved by hand (tests) is seen here; the timer covers real time.
    deps.wake.due();
    try {
      await reconcileOnce(ctx, deps.owns, deps.active);
      await expireQueuedOnce(ctx, deps.queueDeadlines);
    } catch (error) {
      logger.warn({ err: error }, "reconcile pass failed");
    }
  });

  const repairing = new Coalesced(async () => {
    const ctx = deps.context();
    if (!ctx) return;
    try {
      await repairOnce(ctx, deps.active);
      if (deps.waiting.size > 0) await recheckWaitingJobs(ctx, deps.waiting);
    } catch (error) {
      logger.warn({ err: error }, "repair sweep failed");
    }
  });

  // Each replica deletes the expired jobs of its own partitions, so two never race over the same jobs.
  const sweeping = new Coalesced(async () => {
    const ctx = deps.context();
    if (!ctx || deps.stopped() || ctx.jobsWatch.partitions.size === 0) {
      retentionDue.set(0);
      return;
    }
    try {
      // Decide on every record written before the pass began, whichever replica wrote it.
      await ctx.jobsWatch.caughtUp();
      const pass = await sweepRetentionOnce(ctx, deps.finished);
      logger.info(
        {
          deleted_jobs: pass.deletedJobs,
          deleted_artifacts: pass.artifacts,
          deleted_log_messages: pass.logMessages,
          due_left: pass.dueLeft,
          finished_jobs: deps.finished.size,
        },
        "retention sweep",
      );
    } catch (error) {
      logger.warn({ err: error }, "retention sweep failed; the next one tries again");
    }
  });
  return { reconciling, repairing, sweeping };
}

/** Runs each pass on its interval; the returned function stops them. */
export function runUpkeepEvery(
  passes: UpkeepPasses,
  intervals: Pick<
    SchedulerConfig,
    "CJS_RECONCILE_INTERVAL_MS" | "CJS_REPAIR_INTERVAL_MS" | "CJS_RETENTION_SWEEP_INTERVAL_MS"
  >,
): () => void {
  const timers = [
    setInterval(() => void passes.reconciling.run(), intervals.CJS_RECONCILE_INTERVAL_MS),
    setInterval(() => void passes.repairing.run(), intervals.CJS_REPAIR_INTERVAL_MS),
    setInterval(() => void passes.sweeping.run(), intervals.CJS_RETENTION_SWEEP_INTERVAL_MS),
  ];
  return () => {
    for (const timer of timers) clearInterval(timer);
  };
}
