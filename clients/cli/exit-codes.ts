import { ApiError, NetworkError } from "../sdk/src/index.js";
import { UsageError } from "../../shared/terminal/index.js";

export { UsageError };

/**
 * What `cjs` exits with (docs/cli.md, "Exit codes"). Its own failures use the sysexits
 * numbers, 64 and up; `--wait` and `--follow` exit with the job's outcome instead.
 */
export const EXIT = {
  ok: 0,
  /** A job that failed without an exit code of its own (its node was lost, …). */
  jobFailed: 1,
  usage: 64,
  /** The service refused the request as it is (invalid, conflict, limits, payment). */
  refused: 65,
  notFound: 66,
  /** An unexpected fault of the service (500) or of the CLI. */
  internal: 70,
  /** Try again later: rate limited, quota window, queue full, service or network unavailable. */
  tryLater: 75,
  /** Not signed in, or the credential or its permissions were refused. */
  auth: 77,
  /** `--wait`/`--follow`: the job timed out (as timeout(1)). */
  jobTimedOut: 124,
  /** `--wait`/`--follow`: the job was cancelled. */
  jobCancelled: 125,
} as const;

/** The stored session is over (its refresh token spent or revoked, or the session ended): only a new `cjs login` helps. */
export class SignedOut extends Error {
  constructor(readonly reason: string) {
    super("signed out: sign in again with `cjs login`");
    this.name = "SignedOut";
  }
}

/** The exit code of a failure. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError) return EXIT.usage;
  if (error instanceof SignedOut) return EXIT.auth;
  if (error instanceof NetworkError) return EXIT.tryLater;
  if (!(error instanceof ApiError)) return EXIT.internal;
  if (
    error.status === 401 ||
    error.code.startsWith("auth.") ||
    error.code === "permission.denied" ||
    error.code.startsWith("app.")
  )
    return EXIT.auth;
  if (error.status === 404) return EXIT.notFound;
  if (error.status === 429 || error.status === 503) return EXIT.tryLater;
  if (error.status >= 500) return EXIT.internal;
  return EXIT.refused;
}

/** The exit code a finished job stands for. */
export function exitCodeOfJob(job: { state: string; exit_code: number | null }): number {
  switch (job.state) {
    case "succeeded":
      return EXIT.ok;
    case "timed_out":
      return EXIT.jobTimedOut;
    case "cancelled":
      return EXIT.jobCancelled;
    default:
      return job.exit_code !== null && job.exit_code > 0 && job.exit_code < 256 ? job.exit_code : EXIT.jobFailed;
  }
}
