import type { ServiceRun } from "../../shared/process/index.js";
import { cancelJob } from "./jobs/cancel-job.js";
import { deleteJob } from "./jobs/delete-job.js";
import { delivered, poll } from "./jobs/poll.js";
import { recordResult } from "./jobs/record-result.js";
import { retrieveJob } from "./jobs/retrieve-job.js";
import { retryJob } from "./jobs/retry-job.js";
import { submitJob } from "./jobs/submit-job.js";
import type { JobListIndex } from "./listing/job-list-index.js";
import type { PartitionHandlers } from "./partitions/partition-rpcs.js";
import { listJobs, serveListShard } from "./listing/list-jobs.js";
import { serveConcurrencyCounts } from "./queue/concurrency-counts.js";
import type { QueuedJobs } from "./queue/queued-jobs.js";
import type { SchedulerContext } from "./scheduler-context.js";
import { createSchedule } from "./schedules/create-schedule.js";
import { deleteSchedule } from "./schedules/delete-schedule.js";
import { listSchedules } from "./schedules/list-schedules.js";
import { retrieveSchedule } from "./schedules/retrieve-schedule.js";
import type { Schedules } from "./schedules/schedule-store.js";
import { setScheduleState } from "./schedules/set-schedule-state.js";

/**
 * The scheduler's RPCs: jobs, their lists (this replica's part too), schedules and the node
 * plane's poll, result and delivered attempts. Returns the handlers the replica also serves
 * on its partitions' subjects (`PartitionRpcs`).
 */
export function serveScheduler(
  run: ServiceRun,
  context: SchedulerContext,
  listIndex: JobListIndex,
  scheduleBucket: Schedules,
  queued: QueuedJobs,
): PartitionHandlers {
  run.serve("jobSubmit", submitJob(context, queued));
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
  const result = recordResult(context, queued);
  run.serve("nodeResult", result);
  const deliveredHandler = delivered(context);
  run.serve("nodeDelivered", deliveredHandler);
  return { result, delivered: deliveredHandler };
}
