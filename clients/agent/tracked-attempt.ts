import type { Clock } from "../../shared/runtime/index.js";
import type { FinishContext } from "./finish-attempt.js";

/** What running and recovering attempts need from the agent. */
export interface AttemptContext extends FinishContext {
  clock: Clock;
  workDir: string;
  killGraceMs: number;
  /** The agent's own environment (PATH and HOME pass to jobs). */
  env: Record<string, string | undefined>;
}

/** An attempt the agent holds: one it runs, or one a previous run left to finish. */
export interface TrackedAttempt {
  /** `<job id>#<attempt>`. */
  readonly key: string;
  readonly job_id: string;
  readonly attempt: number;
  /** Listed in heartbeats as running on this node. */
  readonly listed: boolean;
  /** Its command runs and nobody asked it to stop. */
  readonly commandRunning: boolean;
  /** The service said to stop it (`cancelled`, `timed_out`, `reassigned`, …): kill the command, report no result. */
  stop(reason: string): void;
  /** The agent stops now: kill the command within `graceMs`, leave the rest for the next start. */
  halt(graceMs: number): Promise<void>;
  /** SIGKILL the command's group at once (the agent process is exiting). */
  killNow(): void;
  /** Settles when the attempt is finished with (reported, or left for the next start). */
  readonly done: Promise<void>;
}
