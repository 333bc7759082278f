import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { AgentAssignment } from "./node-plane.js";

/** The spool of an attempt's log lines, inside its workspace. */
export const SPOOL_FILE_NAME = ".cjs-log-spool.jsonl";
export const ARTIFACTS_DIR_NAME = "artifacts";

export interface Workspace {
  /** The job's working directory: `<work dir>/jobs/<job id>-<attempt>/`. */
  dir: string;
  /** `$CJS_ARTIFACTS_DIR`: every regular file left here is uploaded when the job ends. */
  artifactsDir: string;
  spoolPath: string;
}

export function workspaceOf(dir: string): Workspace {
  return { dir, artifactsDir: join(dir, ARTIFACTS_DIR_NAME), spoolPath: join(dir, SPOOL_FILE_NAME) };
}

/** A fresh, empty workspace for one attempt (anything left from an earlier try of it is removed). */
export async function createWorkspace(workDir: string, jobId: string, attempt: number): Promise<Workspace> {
  const workspace = workspaceOf(join(workDir, "jobs", `${jobId}-${attempt}`));
  await rm(workspace.dir, { recursive: true, force: true });
  await mkdir(workspace.artifactsDir, { recursive: true, mode: 0o700 });
  return workspace;
}

export async function removeWorkspace(workspace: Workspace): Promise<void> {
  await rm(workspace.dir, { recursive: true, force: true });
}

/**
 * The job's environment: the agent's PATH and HOME (so `sh`, `python`, … are found),
 * the job's own variables over them, and the agent's `CJS_*` variables over those.
 */
export function jobEnvironment(
  job: AgentAssignment,
  workspace: Workspace,
  agentEnv: Record<string, string | undefined>,
): Record<string, string> {
  const inherited: Record<string, string> = {};
  for (const name of ["PATH", "HOME"] as const) {
    const value = agentEnv[name];
    if (value !== undefined) inherited[name] = value;
  }
  return {
    ...inherited,
    ...job.env,
    CJS_JOB_ID: job.job_id,
    CJS_ATTEMPT: String(job.attempt),
    CJS_ARTIFACTS_DIR: workspace.artifactsDir,
  };
}
