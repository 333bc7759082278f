import { Scope, type ApiKeySummary } from "../../../shared/contract/index.js";
import type { ApiKeyRecord } from "./records.js";

/** The listable face of a key: everything but its hash and owner fields, with what billing charged it this month. */
export function apiKeySummary(record: ApiKeyRecord, spentThisMonth: number | null): ApiKeySummary {
  const {
    key_id,
    name,
    hint,
    maxJobsPerHour,
    maxConcurrentJobs,
    allowedJobTypes,
    expires_at,
    budget_credits_per_month,
  } = record;
  const { created_at, last_used_at, last_used_ip, revoked_at } = record;
  // A scope this replica does not know yet is not shown rather than refused.
  const scopes =
    record.scopes === null
      ? null
      : record.scopes.flatMap((scope) => (Scope.safeParse(scope).success ? [scope as Scope] : []));
  return {
    key_id,
    name,
    hint,
    maxJobsPerHour,
    maxConcurrentJobs,
    allowedJobTypes,
    scopes,
    expires_at,
    budget_credits_per_month,
    spent_credits_this_month: spentThisMonth,
    created_at,
    last_used_at,
    last_used_ip,
    revoked_at,
  };
}
