import { expect } from "vitest";
import type { Job } from "../../shared/contract/index.js";
import type { ComputeClient } from "./client.js";

/**
 * The job once it reads `running`, as `user` retrieves it. A node that was given the job
 * runs it at once; its start is written a moment after (decision 0095), so a test that
 * looks right after the node's poll waits for it.
 */
export async function runningJob(user: ComputeClient, jobId: string, timeoutMs = 10_000): Promise<Job> {
  let job: Job | undefined;
  await expect
    .poll(
      async () => {
        job = (await user.call("retrieveJob", { job_id: jobId })).job;
        return job.state;
      },
      { timeout: timeoutMs },
    )
    .toBe("running");
  return job!;
}
