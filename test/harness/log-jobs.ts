import type { ComputeClient } from "./client.js";
import type { LogLine } from "../../shared/contract/index.js";
import { FakeNode } from "./fake-node.js";

/** Log lines `from`..`to` (their `seq`), each `line <seq>` unless `text` says otherwise. */
export function logLines(from: number, to: number, text = (seq: number) => `line ${seq}`): LogLine[] {
  return Array.from({ length: to - from + 1 }, (_, index) => ({
    seq: from + index,
    stream: "stdout",
    line: text(from + index),
    ts: new Date().toISOString(),
  }));
}

/**
 * A job of its own pool, polled by a fresh node of that pool, so it is running on that
 * node; `push` sends a batch of its log lines as that node.
 */
export async function runningJobWithLogs(user: ComputeClient, baseUrl: string, appId: string, pool: string) {
  const node = await FakeNode.register(user, baseUrl, appId, { pool_id: pool });
  const { job_id } = await user.call("submitJob", { type: "shell", command: ["echo"], pool_id: pool });
  const [assignment] = await node.poll(10);
  if (assignment?.job_id !== job_id)
    throw new Error(`the node was given ${assignment?.job_id ?? "nothing"}, not ${job_id}`);
  const push = (attempt: number, batch: LogLine[]) => node.client.call("pushLogs", { job_id, attempt, lines: batch });
  return { node, jobId: job_id, push };
}
