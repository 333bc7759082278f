/** The soak's steady stream of short jobs on the operator pool, sent through the load balancer. */
import { setTimeout as delay } from "node:timers/promises";
import type { SubmitJobRequest } from "../../../shared/contract/index.js";
import type { Submission } from "./accounting.js";
import { errorCode, type Session } from "./session.js";

/** Submits never pile up behind a stalled gateway beyond this many. */
const MAX_IN_FLIGHT = 16;

/** A job that prints its token and ends: light, and charged, since it runs on an operator pool. */
export function soakJob(runId: string, seq: number): SubmitJobRequest {
  return {
    type: "shell",
    command: ["sh", "-c", `echo chaos-${runId}-${seq}`],
    env: {},
    resources: { cpu: 0.25, memory_mb: 64, gpu: 0 },
    timeout_seconds: 60,
    pool_id: "default",
    labels: {},
    priority: 0,
    dry_run: false,
    name: `chaos ${runId} #${seq}`,
    metadata: { chaos_run: runId, seq: String(seq) },
    max_attempts: 3,
  };
}

export class JobStream {
  readonly submissions: Submission[] = [];
  #stopped = false;
  #inFlight = new Set<Promise<void>>();
  #loop: Promise<void> | undefined;

  constructor(
    private readonly session: Session,
    private readonly runId: string,
    private readonly perSecond: number,
  ) {}

  start(): void {
    this.#loop = this.run();
  }

  private async run(): Promise<void> {
    const intervalMs = 1000 / this.perSecond;
    let next = Date.now();
    while (!this.#stopped) {
      if (this.#inFlight.size < MAX_IN_FLIGHT) this.send();
      next += intervalMs;
      await delay(Math.max(0, next - Date.now()));
    }
  }

  private send(): void {
    const submission: Submission = { seq: this.submissions.length + 1, sentAtMs: Date.now(), jobId: null, error: null };
    this.submissions.push(submission);
    const sent = this.session
      .once("submitJob", soakJob(this.runId, submission.seq))
      .then((answer) => {
        submission.jobId = answer.job_id;
      })
      .catch((error: unknown) => {
        submission.error = errorCode(error);
      })
      .finally(() => this.#inFlight.delete(sent));
    this.#inFlight.add(sent);
  }

  /** Stops sending and waits for the answers still due. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loop;
    await Promise.all(this.#inFlight);
  }

  get acknowledged(): number {
    return this.submissions.filter((submission) => submission.jobId !== null).length;
  }
}
