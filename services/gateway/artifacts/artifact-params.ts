import { z } from "zod";
import { ArtifactId, JobId } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { zodIssues } from "../../../shared/runtime/index.js";

/** The path parameters of the artifact routes, `/{jobId}/{id}`. */
export interface ArtifactRouteParams {
  jobId: string;
  artifactId: string;
}

const ArtifactPath = z.object({ job_id: JobId, artifact_id: ArtifactId });

/** The job and artifact the path names; `request.invalid` for a name that is not an artifact id. */
export function artifactParams({ jobId, artifactId }: ArtifactRouteParams): { job_id: string; artifact_id: string } {
  const parsed = ArtifactPath.safeParse({ job_id: jobId, artifact_id: artifactId });
  if (!parsed.success) {
    throw new AppError("request.invalid", "The path does not name a job and an artifact.", {
      details: { issues: zodIssues(parsed.error) },
    });
  }
  return parsed.data;
}

/** The request's path without its query: what the signature covers. */
export function pathOf(url: string): string {
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}
