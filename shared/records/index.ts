export { businessJobsFilter, JobRecord, jobKey, mayBeQueued, mayHaveChargedAttempt, publicJob } from "./job-record.js";
export {
  checkSharedPools,
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
