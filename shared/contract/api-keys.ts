import { z } from "zod";
import { Timestamp } from "./common.js";
import { ApiKeyId } from "./ids.js";

/** A job type name, as in `allowedJobTypes` and a job's `type`. */
export const JobTypeName = z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, "lowercase letters, digits, '-' or '_', at most 32 characters");

/** Quotas carried by an API key (the spec's names, exactly). Absent means unlimited. */
export const ApiKeyQuotas = z.strictObject({
  maxJobsPerHour: z.number().int().min(1).max(1_000_000).optional(),
  /** At most 10,000: the key's active jobs are one record, which must stay under NATS's 1 MB message limit. */
  maxConcurrentJobs: z.number().int().min(1).max(10_000).optional(),
  allowedJobTypes: z.array(JobTypeName).min(1).max(64).optional(),
});
export type ApiKeyQuotas = z.infer<typeof ApiKeyQuotas>;

/**
 * The quotas a service applies: those of the API key a user called with, or those a node
 * inherited from the key that registered it. Each null means no limit.
 */
export const QuotaLimits = z.object({
  maxJobsPerHour: z.number().int().nullable(),
  maxConcurrentJobs: z.number().int().nullable(),
  allowedJobTypes: z.array(z.string()).nullable(),
});
export type QuotaLimits = z.infer<typeof QuotaLimits>;

/** Whether any of the limits is set. */
export function hasLimits(limits: QuotaLimits | null): limits is QuotaLimits {
  return limits !== null && (limits.maxJobsPerHour !== null || limits.maxConcurrentJobs !== null || limits.allowedJobTypes !== null);
}

export const CreateApiKeyRequest = ApiKeyQuotas.extend({
  name: z.string().trim().min(1).max(100),
});
export type CreateApiKeyRequest = z.infer<typeof CreateApiKeyRequest>;

/** A key as listed: never the secret. */
export const ApiKeySummary = z.object({
  key_id: z.string(),
  name: z.string(),
  /** The last four characters of the key, to tell keys apart. */
  hint: z.string(),
  maxJobsPerHour: z.number().int().nullable(),
  maxConcurrentJobs: z.number().int().nullable(),
  allowedJobTypes: z.array(z.string()).nullable(),
  created_at: Timestamp,
  last_used_at: Timestamp.nullable(),
  revoked_at: Timestamp.nullable(),
});
export type ApiKeySummary = z.infer<typeof ApiKeySummary>;

export const CreateApiKeyResponse = ApiKeySummary.extend({
  /** The whole key, `<prefix>_<secret>`: shown this once, never again. */
  key: z.string(),
});
export type CreateApiKeyResponse = z.infer<typeof CreateApiKeyResponse>;

export const ListApiKeysResponse = z.object({ items: z.array(ApiKeySummary) });
export type ListApiKeysResponse = z.infer<typeof ListApiKeysResponse>;

export const RevokeApiKeyRequest = z.strictObject({ key_id: ApiKeyId });
export type RevokeApiKeyRequest = z.infer<typeof RevokeApiKeyRequest>;

export const RevokeApiKeyResponse = z.object({ key_id: z.string(), revoked_at: Timestamp });
export type RevokeApiKeyResponse = z.infer<typeof RevokeApiKeyResponse>;
