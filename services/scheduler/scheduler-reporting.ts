import type { PartitionOwnership } from "./partitions/partition-ownership.js";
import type { ActiveJobs } from "./queue/active-jobs.js";
import type { QueuedJobs } from "./queue/queued-jobs.js";
import type { SchedulerContext } from "./scheduler-context.js";
import { partitionGauges, schedulerSnapshots } from "./scheduler-metrics.js";
import { takeSnapshot } from "./scheduler-snapshot.js";

/**
 * Reports this replica's gauges at scrape time, never on the job path: its own partitions'
 * jobs (sum them across replicas), every node, and its partitions. Answers the stop.
 */
export function reportAtScrape(
  context: SchedulerContext,
  queued: QueuedJobs,
  active: ActiveJobs,
  ownership: PartitionOwnership,
): () => void {
  const stopSnapshots = schedulerSnapshots.reportFrom(() => {
    const nowMs = context.clock.now();
    return takeSnapshot({
      queued: queued.jobs(),
      active: active.jobs.values(),
      nodes: context.view.nodeViews(nowMs),
      nowMs,
    });
  });
  const stopGauges = partitionGauges.reportFrom(() => ({
    owned: ownership.owned.size,
    unowned: ownership.unowned().length,
    queued: queued.size,
  }));
  return () => {
    stopSnapshots();
    stopGauges();
  };
}
