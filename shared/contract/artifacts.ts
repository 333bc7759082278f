import { z } from "zod";
import { Timestamp } from "./common.js";
import { ArtifactId, JobId } from "./ids.js";
import { JobPayload } from "./jobs.js";

/** A media type as sent in `Content-Type` (`text/plain; charset=utf-8`). */
export const ContentType = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .regex(/^[\x20-\x7e]+$/, "printable ASCII");

export const PresignUploadRequest = z.strictObject({
  job_id: JobId,
  artifact_id: ArtifactId,
  /** Recorded as the artifact's type, whatever the upload's `Content-Type`. Absent: the upload's `Content-Type`, else `application/octet-stream`. */
  content_type: ContentType.optional(),
});
export type PresignUploadRequest = z.infer<typeof PresignUploadRequest>;

export const PresignDownloadRequest = z.strictObject({
  job_id: JobId,
  artifact_id: ArtifactId,
});
export type PresignDownloadRequest = z.infer<typeof PresignDownloadRequest>;

/**
 * The path of one artifact of a job (`GET`, with `X-App-ID` and a JWT or an API key with
 * `jobs:read`): its bytes at once, for scripts and CI runners, which hold a key and need no
 * signed URL.
 */
export function artifactPath(jobId: string, artifactId: string): string {
  return `/api/compute/jobs/${encodeURIComponent(jobId)}/artifacts/${encodeURIComponent(artifactId)}`;
}

/** The same path as a route pattern, for the router. */
export const ARTIFACT_ROUTE = "/api/compute/jobs/:jobId/artifacts/:artifactId";

/** A URL that is its own credential: send `method` to `url`, with no other header, before `expires_at`. */
export const PresignedUrl = z.object({
  url: z.string(),
  method: z.enum(["PUT", "GET"]),
  expires_at: Timestamp,
});
export type PresignedUrl = z.infer<typeof PresignedUrl>;

/** A file a job produced, stored with the job. */
export const Artifact = z.object({
  artifact_id: ArtifactId,
  size_bytes: z.number().int().min(0),
  /** SHA-256 of the content, in lowercase hex; the download's `ETag` carries it in quotes. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  content_type: z.string(),
  /** When the upload completed. */
  created_at: Timestamp,
  /** The attempt whose agent uploaded it; null for an upload through presign-upload. */
  attempt: z.number().int().min(1).nullable(),
});
export type Artifact = z.infer<typeof Artifact>;

/** The retrieve answer: the job and its artifacts, by name. */
export const RetrieveJobResponse = JobPayload.extend({ artifacts: z.array(Artifact) });
export type RetrieveJobResponse = z.infer<typeof RetrieveJobResponse>;

/** Internal: the gateway asks billing how many bytes of artifacts a business may keep (`subjects.billingArtifactQuota()`). */
export const ArtifactQuotaCommand = z.object({ app_id: z.string(), business_id: z.string() });
export type ArtifactQuotaCommand = z.infer<typeof ArtifactQuotaCommand>;

export const ArtifactQuota = z.object({
  /** The plan's `limits.max_artifact_bytes`; null for the operator's own business, which has no budget. */
  max_artifact_bytes: z.number().int().positive().nullable(),
});
export type ArtifactQuota = z.infer<typeof ArtifactQuota>;
