export { businessJobsFilter, JobRecord, jobKey, operatorPoolKey, publicJob, selfHostedPoolKey } from "./job-record.js";
export { NodeRecord, nodeStatus } from "./node-record.js";
export { AllocatedAttempt, AllocationRecord, allocationUse } from "./allocation-record.js";
