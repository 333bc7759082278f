import { z } from "zod";
import { Artifact } from "./artifacts.js";
import { AppId, ArtifactId, BusinessId, JobId } from "./ids.js";

/** `jobs/delete`: the job removed, with its log lines and artifacts. */
export const DeleteJobResponse = z.object({
  /** The job deleted. */
  job_id: JobId,
});
export type DeleteJobResponse = z.infer<typeof DeleteJobResponse>;

/** `jobs/artifacts/list`: the job's artifacts, by name (as `jobs/retrieve` shows them). */
export const ListArtifactsResponse = z.object({
  job_id: JobId,
  /** Sorted by `artifact_id`. */
  artifacts: z.array(Artifact),
});
export type ListArtifactsResponse = z.infer<typeof ListArtifactsResponse>;

export const DeleteArtifactRequest = z.strictObject({
  /** A job of the caller's business, in any state. */
  job_id: JobId,
  /** The artifact's name within the job. */
  artifact_id: ArtifactId,
});
export type DeleteArtifactRequest = z.infer<typeof DeleteArtifactRequest>;

/** `jobs/artifacts/delete`: the artifact removed (its bytes and its index entry). */
export const DeleteArtifactResponse = z.object({ job_id: JobId, artifact_id: ArtifactId });
export type DeleteArtifactResponse = z.infer<typeof DeleteArtifactResponse>;

/** One job's data, named by tenancy and id: what the scheduler asks the gateway and the log relay to remove. */
export const PurgeJobDataCommand = z.object({ app_id: AppId, business_id: BusinessId, job_id: JobId });
export type PurgeJobDataCommand = z.infer<typeof PurgeJobDataCommand>;

/** How many artifacts, or log messages, the purge removed (0 when there were none: a purge is safe to repeat). */
export const PurgeJobDataReply = z.object({ deleted: z.number().int().min(0) });
export type PurgeJobDataReply = z.infer<typeof PurgeJobDataReply>;

/** Most businesses one retention lookup names: the sweeper asks in pages of this size. */
export const RETENTION_LOOKUP_MAX_BUSINESSES = 500;

const BusinessRef = z.object({ app_id: AppId, business_id: BusinessId });

/** The scheduler's retention sweep asks billing how long each business's plan keeps finished jobs. */
export const RetentionLookupCommand = z.object({
  businesses: z.array(BusinessRef).max(RETENTION_LOOKUP_MAX_BUSINESSES),
});
export type RetentionLookupCommand = z.infer<typeof RetentionLookupCommand>;

/** Per business asked, in the same order: its plan's `retention_days`. */
export const RetentionLookupReply = z.object({
  businesses: z.array(BusinessRef.extend({ retention_days: z.number().int().min(1) })),
});
export type RetentionLookupReply = z.infer<typeof RetentionLookupReply>;
