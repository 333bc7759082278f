import { z } from "zod";
import { hasAtMostSixDecimals, Timestamp } from "./common.js";
import { ApiKeyId } from "./ids.js";

/** A job type name, as in `allowedJobTypes` and a job's `type`. */
export const JobTypeName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,31}$/, "lowercase letters, digits, '-' or '_', at most 32 characters");

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
  return (
    limits !== null &&
    (limits.maxJobsPerHour !== null || limits.maxConcurrentJobs !== null || limits.allowedJobTypes !== null)
  );
}

/**
 * What an API key may do. Each operation needs at most one (`ROUTE_SCOPES`), a few one more (`ALSO_NEEDED_SCOPES`); a key lists
 * those it holds. A signed-in session holds every scope.
 */
export const API_KEY_SCOPES = [
  "jobs:read",
  "jobs:write",
  "nodes:read",
  "nodes:write",
  "nodes:register",
  "billing:read",
  "billing:write",
  "keys:read",
  "keys:write",
  "users:read",
  "users:write",
  "webhooks:read",
  "webhooks:write",
  "schedules:read",
  "schedules:write",
] as const;
export const Scope = z.enum(API_KEY_SCOPES);
export type Scope = z.infer<typeof Scope>;

/** The scopes a key is created with: at least one, each once. Absent means every scope. */
export const ApiKeyScopes = z
  .array(Scope)
  .min(1)
  .max(API_KEY_SCOPES.length)
  .refine((scopes) => new Set(scopes).size === scopes.length, "each scope at most once");

/** A key's monthly compute budget, in credits (at most six decimal places, like every amount). */
export const KeyBudget = z
  .number()
  .positive()
  .max(1_000_000_000)
  .refine(hasAtMostSixDecimals, "at most six decimal places");

export const CreateApiKeyRequest = ApiKeyQuotas.extend({
  name: z.string().trim().min(1).max(100),
  /** When the key stops working: in the future, and no later than the operator's maximum. Absent: the maximum, or never. */
  expires_at: Timestamp.optional(),
  /** What the key may do; absent: everything. */
  scopes: ApiKeyScopes.optional(),
  /** Credits the key's jobs on operator pools may be charged per calendar month (UTC); absent: no budget of its own. */
  budget_credits_per_month: KeyBudget.optional(),
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
  /** The key's scopes; null: every scope. */
  scopes: z.array(Scope).nullable(),
  /** When the key stops working; null: never. */
  expires_at: Timestamp.nullable(),
  budget_credits_per_month: z.number().nullable(),
  /** Credits charged for the key's jobs this calendar month (UTC); null when billing could not be asked. */
  spent_credits_this_month: z.number().nullable(),
  created_at: Timestamp,
  /** Written at most once a minute per gateway replica, so it may lag by that much. */
  last_used_at: Timestamp.nullable(),
  /** The client address of that use, as the gateway resolved it (see CJS_TRUST_PROXY). */
  last_used_ip: z.string().nullable(),
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

/** Renames a key or changes its budget (null removes it); at least one of the two. */
export const UpdateApiKeyRequest = z
  .strictObject({
    key_id: ApiKeyId,
    name: z.string().trim().min(1).max(100).optional(),
    budget_credits_per_month: KeyBudget.nullable().optional(),
  })
  .refine(
    (body) => body.name !== undefined || body.budget_credits_per_month !== undefined,
    "send name, budget_credits_per_month or both",
  )
  // The same rule in the JSON Schema (a refinement has none).
  .meta({ anyOf: [{ required: ["name"] }, { required: ["budget_credits_per_month"] }] });
export type UpdateApiKeyRequest = z.infer<typeof UpdateApiKeyRequest>;

export const UpdateApiKeyResponse = ApiKeySummary;
export type UpdateApiKeyResponse = z.infer<typeof UpdateApiKeyResponse>;
