import type { Job, PendingReason } from "../../../shared/contract/index.js";
import { when } from "./format.js";

/** What the words need of a job, or of a submit's draft in a dry run. */
export type WaitingJob = Pick<Job, "pool_id" | "type" | "labels" | "resources"> &
  Partial<Pick<Job, "next_attempt_at" | "concurrency" | "attempt">>;

function labelList(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(", ");
}

/** Why a queued job waits, in words, naming what it asks for (docs/job-states.md has the rules). */
export function pendingReasonWords(reason: PendingReason, job: WaitingJob): string {
  const pool = `pool “${job.pool_id}”`;
  switch (reason) {
    case "waiting_for_scheduler":
      return `A node of ${pool} has room: the job is about to be placed (jobs of higher priority, or other businesses' turns, may come first).`;
    case "no_nodes_in_pool":
      return `No node of ${pool} is online. A self-hosted pool's jobs run once one of its nodes is up.`;
    case "no_node_with_type":
      return `No online node of ${pool} runs jobs of type “${job.type}”.`;
    case "no_node_with_labels":
      return `No online node of ${pool} carries the labels ${labelList(job.labels)}. Labels choose nodes: the job runs only on a node that has every one of them, with the same value.`;
    case "no_node_with_resources":
      return `No node of ${pool} is big enough for ${job.resources.cpu} CPU, ${job.resources.memory_mb} MB of memory and ${job.resources.gpu} GPU, even when idle.`;
    case "all_nodes_busy":
      return `Every node of ${pool} that fits is busy; the job starts as soon as one has room.`;
    case "all_nodes_draining":
      return `Every node of ${pool} that fits is draining (taking no new jobs).`;
    case "all_nodes_at_hourly_quota":
      return `Every node of ${pool} that fits has taken its most jobs for this hour; the job starts when one has room again.`;
    case "scheduled":
      return `It is set to start at ${when(job.next_attempt_at)}.`;
    case "retry_backoff":
      return `Attempt ${job.attempt ?? "?"} failed; the next one starts after its backoff, at ${when(job.next_attempt_at)}.`;
    case "waiting_for_dependencies":
      return "It waits for the jobs it depends on to succeed.";
    case "concurrency_limit":
      return `Its concurrency key “${job.concurrency?.key ?? "?"}” already has ${job.concurrency?.max_running ?? "its most"} jobs running.`;
  }
}
