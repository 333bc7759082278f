import type { Clock, Logger } from "../../shared/runtime/index.js";
import type { SchedulerConfig } from "./config.js";
import type { JobRevisionListener } from "./partitions/jobs-watch.js";
import { JobListIndex } from "./listing/job-list-index.js";
import { ActiveJobs } from "./queue/active-jobs.js";
import { settleChildrenOf } from "./queue/dependency-resolution.js";
import { QueuedJobs } from "./queue/queued-jobs.js";
import { QueueDeadlines } from "./queue/queue-timeout.js";
import { WaitingJobs } from "./queue/waiting-jobs.js";
import type { SchedulerContext } from "./scheduler-context.js";
import { FinishedJobs } from "./upkeep/finished-jobs.js";

/** What a replica keeps in memory of its partitions' jobs; the jobs watch feeds each part. */
export interface ReplicaParts {
  active: ActiveJobs;
  waiting: WaitingJobs;
  queued: QueuedJobs;
  listIndex: JobListIndex;
  finished: FinishedJobs;
  queueDeadlines: QueueDeadlines;
}

export interface ReplicaPartsHooks {
  config: Readonly<SchedulerConfig>;
  clock: Clock;
  /** Asks for a placement round soon. */
  requestPlacement(): void;
  logger: Logger;
  /** The replica's context once started. */
  context(): SchedulerContext | undefined;
  stopped(): boolean;
}

export function replicaParts(hooks: ReplicaPartsHooks): ReplicaParts {
  const pools = hooks.config.CJS_SHARED_OPERATOR_POOLS;
  // The owner of a job that ended settles the jobs waiting for it; each step is a compare-and-set, and the repair pass covers a lost one.
  const waiting: WaitingJobs = new WaitingJobs((parentKey, end, dependents) => {
    const ctx = hooks.context();
    if (hooks.stopped() || !ctx) return;
    void settleChildrenOf(ctx, waiting, parentKey, end, dependents).catch((error: unknown) =>
      hooks.logger.warn(
        { err: error, job_key: parentKey },
        "settling the jobs waiting for a job failed; the repair pass tries again",
      ),
    );
  });
  return {
    // A job with a concurrency key that ended frees a place of its key: the next of the key starts at once.
    active: new ActiveJobs(pools, hooks.requestPlacement),
    waiting,
    // A job joining the queue asks for a round.
    queued: new QueuedJobs(hooks.requestPlacement, pools, () => hooks.clock.now()),
    listIndex: new JobListIndex(),
    finished: new FinishedJobs(),
    queueDeadlines: new QueueDeadlines(),
  };
}

/** The parts in the order the jobs watch feeds them. */
export function watchedParts(parts: ReplicaParts): JobRevisionListener[] {
  return [parts.active, parts.queued, parts.listIndex, parts.finished, parts.queueDeadlines, parts.waiting];
}
