import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { Clock } from "../../shared/runtime/index.js";
import type { ClusterView } from "./placement/cluster-view.js";
import type { ActiveRecords } from "./queue/active-jobs.js";
import type { ConcurrencyUse } from "./queue/concurrency-keys.js";
import type { SchedulerConfig } from "./config.js";
import type { QueueDepthGuard } from "./queue/job-queue.js";
import type { JobsWatch } from "./partitions/jobs-watch.js";
import type { PartitionOwnership } from "./partitions/partition-ownership.js";
import type { OwnShare } from "./placement/own-share.js";
import type { DeferredStarts } from "./jobs/deferred-starts.js";
import type { AllocationWriter } from "./placement/reservations.js";
import type { SchedulerStore } from "./scheduler-store.js";

/** What the scheduler's handlers and loops share. */
export interface SchedulerContext {
  nc: NatsConnection;
  /** This replica's id: its member record, its claims, the subjects only it answers. */
  instance: string;
  logger: Logger;
  clock: Clock;
  config: Readonly<SchedulerConfig>;
  store: SchedulerStore;
  view: ClusterView;
  /** The one writer of each node's allocation record in this replica (reserve, release). */
  allocations: AllocationWriter;
  /** Which nodes placement tries first: this replica's share of them among the replicas placing. */
  ownShare: OwnShare;
  /** The replica's watch of the job bucket; `caughtUp()` gives read-your-writes to a request served from a picture kept from it. */
  jobsWatch: JobsWatch;
  /** The bound on waiting jobs, checked by submit and retry. */
  queueDepth: QueueDepthGuard;
  /** Jobs assigned or running per concurrency key (the active jobs' index). */
  concurrency: ConcurrencyUse;
  /** The latest record of each active job of the owned partitions (the same index), and this replica's writes to it. */
  active: ActiveRecords;
  /** Which job partitions this replica owns, and which replica owns the others. */
  ownership: Pick<PartitionOwnership, "owned" | "ownerOf" | "holders">;
  /** The starts of attempts this replica's polls gave to nodes, not written yet (decision 0095). */
  starts: DeferredStarts;
  /** Asks for a placement round soon (coalesced; never a busy loop). */
  requestPlacement(): void;
}
