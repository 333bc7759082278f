export { businessJobsFilter, JobRecord, jobKey, mayBeQueued, mayHaveChargedAttempt, operatorPoolKey, publicJob, selfHostedPoolKey } from "./job-record.js";
export { NodeRecord, nodeStatus } from "./node-record.js";
export { AllocatedAttempt, AllocationRecord, allocationUse } from "./allocation-record.js";
export { addToWindow, HourWindow, pruneWindow, removeFromWindow, roomAt, secondsUntilRoom, WINDOW_SECONDS, windowCount } from "./hour-window.js";
