export { JobRecord, mayBeQueued, mayHaveChargedAttempt, publicJob } from "./job-record.js";
export {
  businessJobsFilter,
  JOB_PARTITIONS,
  jobIdKeyFilter,
  jobIdOfKey,
  jobKey,
  type JobKeyParts,
  type JobKind,
  jobPartition,
  partitionAddress,
  LEGACY_JOB_KEYS,
  legacyJobKey,
  operatorJobKeyFilters,
  parseJobKey,
  partitionKeyFilters,
  scopePartition,
  siblingJobKey,
  tagJobId,
} from "./job-key.js";
export {
  checkSharedPools,
  isOperatorPool,
  isOperatorPoolKey,
  metricsPool,
  operatorPoolKey,
  placementPoolKey,
  PoolSettings,
  selfHostedPoolKey,
} from "./pool-key.js";
export { NodeRecord, nodeStatus } from "./node-record.js";
export { AllocatedAttempt, AllocationRecord, allocationUse } from "./allocation-record.js";
export {
  addToWindow,
  HourWindow,
  pruneWindow,
  removeFromWindow,
  roomAt,
  secondsUntilRoom,
  WINDOW_SECONDS,
  windowCount,
} from "./hour-window.js";
export { LOG_MESSAGE_MAX_LINES, lineBytes, LogMessage, readLogMessage } from "./log-message.js";
export type { StoredLogLines } from "./log-message.js";
