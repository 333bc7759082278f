import { describe, expect, it } from "vitest";
import { queuedJobRecord } from "../../test/harness/job-records.js";
import { Job, SubmitJobRequest } from "./jobs.js";
import { RERUN_OF_KEY, rerunRequest } from "./rerun.js";

const ENDED = Job.parse(
  queuedJobRecord({
    job_id: "job_0VbeygdjkkWnwRC9cwe1",
    name: "nightly etl",
    command: ["sh", "-c", "./etl.sh"],
    env: { STAGE: "prod" },
    resources: { cpu: 2, memory_mb: 2048, gpu: 0 },
    timeout_seconds: 900,
    pool_id: "warehouse",
    labels: { zone: "eu-1" },
    priority: 5,
    metadata: { ticket: "OPS-12" },
    max_attempts: 2,
    retry: { max_retries: 1, backoff: { initial_seconds: 30, factor: 2, max_seconds: 600, jitter: 0.1 } },
    queue_timeout_seconds: 3600,
    run_at: "2026-03-01T02:00:00.000Z",
    depends_on: ["job_0VbeygdjkkWnwRC9cwe0"],
    concurrency: { key: "warehouse", max_running: 1 },
    schedule_id: "sch_0VbeygdjkkWnwRC9cwe1",
    state: "failed",
    attempt: 2,
    exit_code: 3,
  }),
);

describe("rerunRequest", () => {
  it("submits the same work, linked to the job it repeats by metadata.rerun_of", () => {
    const request = SubmitJobRequest.parse(rerunRequest(ENDED));
    expect(request).toMatchObject({
      type: "shell",
      command: ["sh", "-c", "./etl.sh"],
      env: { STAGE: "prod" },
      resources: { cpu: 2, memory_mb: 2048, gpu: 0 },
      timeout_seconds: 900,
      pool_id: "warehouse",
      labels: { zone: "eu-1" },
      priority: 5,
      name: "nightly etl",
      max_attempts: 2,
      retry: ENDED.retry,
      queue_timeout_seconds: 3600,
      concurrency: { key: "warehouse", max_running: 1 },
      metadata: { ticket: "OPS-12", [RERUN_OF_KEY]: "job_0VbeygdjkkWnwRC9cwe1" },
      dry_run: false,
    });
  });

  it("leaves out what belonged to that one run: its run_at and its dependencies", () => {
    const request = rerunRequest(ENDED);
    expect(request).not.toHaveProperty("run_at");
    expect(request).not.toHaveProperty("depends_on");
  });

  it("links a run again of a run again to the job it repeats, not to the first", () => {
    const again = Job.parse({ ...ENDED, job_id: "job_0VbeygdjkkWnwRC9cwe9", metadata: rerunRequest(ENDED).metadata });
    expect(rerunRequest(again).metadata).toEqual({ ticket: "OPS-12", [RERUN_OF_KEY]: "job_0VbeygdjkkWnwRC9cwe9" });
  });

  it("leaves out a name, retry policy, queue timeout and concurrency key the job did not have", () => {
    const plain = Job.parse(queuedJobRecord({ state: "succeeded" }));
    expect(Object.keys(rerunRequest(plain)).sort()).toEqual(
      [
        "type",
        "command",
        "env",
        "resources",
        "timeout_seconds",
        "pool_id",
        "labels",
        "priority",
        "metadata",
        "max_attempts",
      ].sort(),
    );
  });
});
