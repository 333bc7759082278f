import { z } from "zod";
import { AppId, BusinessId, ContentType } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { UrlSigner } from "../http/signed-url.js";

export const UPLOAD_ROUTE = "/api/compute/artifacts/upload";
export const DOWNLOAD_ROUTE = "/api/compute/artifacts/download";

/** The placeholder an agent replaces with the artifact's name in its upload URL. */
export const ARTIFACT_ID_PLACEHOLDER = "{artifact_id}";

/**
 * What an artifact URL grants besides its path, carried in its query and covered by its
 * signature: the job's tenancy (the object's name starts with it), the attempt that
 * uploads, and the content type chosen when the URL was made.
 */
export interface ArtifactGrant {
  app_id: string;
  business_id: string;
  attempt: number | null;
  content_type: string | null;
}

export interface ArtifactUrlRequest {
  kind: "upload" | "download";
  job_id: string;
  /** Null signs every name of the job (an agent's upload URL, with the placeholder in its path). */
  artifact_id: string | null;
  grant: ArtifactGrant;
  expiresAtMs: number;
}

/** Every parameter an artifact URL may carry besides `expires` and `signature`. */
const ARTIFACT_URL_PARAMS = ["app_id", "business_id", "attempt", "content_type", "scope"] as const;

const GrantQuery = z.object({
  app_id: AppId,
  business_id: BusinessId,
  attempt: z
    .string()
    .regex(/^[1-9][0-9]{0,8}$/)
    .optional(),
  content_type: ContentType.optional(),
});

export function artifactPath(kind: "upload" | "download", jobId: string, artifactId: string): string {
  return `${kind === "upload" ? UPLOAD_ROUTE : DOWNLOAD_ROUTE}/${jobId}/${artifactId}`;
}

/**
 * The path the signature covers: the grant, URL-encoded (so it holds no `/`), as a first
 * segment before the request path. A prefix signature still covers exactly one job's names.
 */
function signedPath(grant: ArtifactGrant, path: string): string {
  return `/${encodeURIComponent(JSON.stringify([grant.app_id, grant.business_id, grant.attempt, grant.content_type]))}${path}`;
}

/** A URL of the artifact routes, signed by `urls`, under `origin` (`https://host`). */
export function signArtifactUrl(
  urls: UrlSigner,
  origin: string,
  { kind, job_id, artifact_id, grant, expiresAtMs }: ArtifactUrlRequest,
): string {
  const prefix = artifact_id === null;
  const path = artifactPath(kind, job_id, prefix ? "" : artifact_id);
  const facts = new URLSearchParams({ app_id: grant.app_id, business_id: grant.business_id });
  if (grant.attempt !== null) facts.set("attempt", String(grant.attempt));
  if (grant.content_type !== null) facts.set("content_type", grant.content_type);
  const signature = urls.sign({
    method: kind === "upload" ? "PUT" : "GET",
    path: signedPath(grant, path),
    expiresAtMs,
    prefix,
  });
  return `${origin}${path}${prefix ? ARTIFACT_ID_PLACEHOLDER : ""}?${facts.toString()}&${signature}`;
}

/** The grant of a request to `path`; throws `url.signature_invalid` or `url.expired` unless its query authorises it now. */
export function verifyArtifactUrl(
  urls: UrlSigner,
  method: "PUT" | "GET",
  path: string,
  query: Record<string, unknown>,
): ArtifactGrant {
  const parsed = GrantQuery.safeParse(query);
  if (!parsed.success) throw new AppError("url.signature_invalid", "This URL is not a valid signed URL.");
  const { app_id, business_id, attempt, content_type } = parsed.data;
  const grant = {
    app_id,
    business_id,
    attempt: attempt === undefined ? null : Number(attempt),
    content_type: content_type ?? null,
  };
  urls.verify(method, signedPath(grant, path), query, ARTIFACT_URL_PARAMS);
  return grant;
}

/** The expiry as the signature carries it (whole seconds), for `expires_at`. */
export function signedExpiry(expiresAtMs: number): string {
  return new Date(Math.floor(expiresAtMs / 1000) * 1000).toISOString();
}
