import type { ApiKeySummary } from "../../../shared/contract/index.js";
import type { ApiKeyRecord } from "./records.js";

/** The listable face of a key: everything but its hash and owner fields. */
export function apiKeySummary(record: ApiKeyRecord): ApiKeySummary {
  const { key_id, name, hint, maxJobsPerHour, maxConcurrentJobs, allowedJobTypes, created_at, last_used_at, revoked_at } = record;
  return { key_id, name, hint, maxJobsPerHour, maxConcurrentJobs, allowedJobTypes, created_at, last_used_at, revoked_at };
}
