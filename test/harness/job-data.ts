import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { ComputeClient } from "./client.js";
import { BUCKETS, kvStreams, STREAMS, subjects } from "../../shared/nats/index.js";
import type { FakeNode } from "./fake-node.js";
import { logLines } from "./log-jobs.js";

/** The artifact every job of these helpers stores. */
export const ARTIFACT_ID = "result.txt";

/** Uploads `bytes` as `artifactId` of the job through a presigned URL (the caller must be signed in with a JWT). */
export async function uploadArtifact(
  user: ComputeClient,
  jobId: string,
  artifactId = ARTIFACT_ID,
  bytes = "result of the job",
): Promise<void> {
  const presigned = await user.call("presignUpload", { job_id: jobId, artifact_id: artifactId });
  const response = await fetch(presigned.url, { method: "PUT", body: bytes, redirect: "error" });
  if (response.status !== 200) throw new Error(`the upload answered ${response.status}: ${await response.text()}`);
}

/**
 * Runs `count` jobs of `pool` on `node` to success, each with `lines` log lines and one
 * artifact; returns their ids. The node must have room for `count` jobs at once.
 */
export async function finishJobsWithData(
  user: ComputeClient,
  node: FakeNode,
  pool: string,
  count: number,
  lines = 3,
): Promise<string[]> {
  const submitted = await Promise.all(
    Array.from(
      { length: count },
      async () => (await user.call("submitJob", { type: "shell", command: ["echo"], pool_id: pool })).job_id,
    ),
  );
  const wanted = new Set(submitted);
  while ([...wanted].some((jobId) => !node.running.has(jobId))) await node.poll(5);
  await Promise.all(
    submitted.map(async (jobId) => {
      const attempt = node.running.get(jobId)!.attempt;
      await node.client.call("pushLogs", { job_id: jobId, attempt, lines: logLines(1, lines) });
      await uploadArtifact(user, jobId);
      await node.finish(jobId);
    }),
  );
  return submitted;
}

/** What the store holds of one job besides its record: its log messages (and drop counts) and its artifact index entries. */
export async function storedJobData(nc: NatsConnection, job: { app_id: string; business_id: string; job_id: string }) {
  const jsm = await jetstreamManager(nc);
  const count = async (stream: string, filter: string) => {
    const info = await jsm.streams.info(stream, { subjects_filter: filter });
    return Object.values(info.state.subjects ?? {}).reduce((sum, each) => sum + each, 0);
  };
  const jobKey = `${job.app_id}.${job.business_id}.${job.job_id}`;
  return {
    logMessages:
      (await count(STREAMS.logs, subjects.jobLogsOfJob(job.job_id))) +
      (await count(STREAMS.logs, subjects.jobLogDrops(job.job_id))),
    artifacts: await count(kvStreams.name(BUCKETS.artifactIndex), `$KV.${BUCKETS.artifactIndex}.${jobKey}.*`),
  };
}
