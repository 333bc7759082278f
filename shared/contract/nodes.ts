import { z } from "zod";
import { JobTypeName, QuotaLimits } from "./api-keys.js";
import { Timestamp } from "./common.js";
import { JobId, NodeId } from "./ids.js";
import { JobError, JobState, JobUsage, Labels, PoolId } from "./jobs.js";

/** What a node offers: `slots` is how many jobs it runs at once. */
export const NodeCapacity = z.strictObject({
  cpu: z.number().positive().max(4096),
  memory_mb: z.number().int().positive().max(16_777_216),
  gpu: z.number().int().min(0).max(256).default(0),
  slots: z.number().int().min(1).max(1024).default(1),
});
export type NodeCapacity = z.infer<typeof NodeCapacity>;

export const RegisterNodeRequest = z.strictObject({
  name: z.string().trim().min(1).max(200),
  hostname: z.string().trim().min(1).max(255),
  pool_id: PoolId.default("default"),
  labels: Labels.default({}),
  capacity: NodeCapacity,
  job_types: z.array(JobTypeName).min(1).max(64).default(["shell"]),
  agent_version: z.string().trim().min(1).max(64),
});
export type RegisterNodeRequest = z.infer<typeof RegisterNodeRequest>;

export const RegisterNodeResponse = z.object({
  node_id: NodeId,
  /** The node's own key, for every node-plane call: shown this once. */
  api_key: z.string(),
  heartbeat_interval_seconds: z.number().int().positive(),
});
export type RegisterNodeResponse = z.infer<typeof RegisterNodeResponse>;

/** A job attempt a node says it is running. */
export const RunningAttempt = z.strictObject({ job_id: JobId, attempt: z.number().int().min(1) });
export type RunningAttempt = z.infer<typeof RunningAttempt>;

export const HeartbeatRequest = z.strictObject({
  running: z.array(RunningAttempt).max(1024).default([]),
});
export type HeartbeatRequest = z.infer<typeof HeartbeatRequest>;

export const StopOrder = z.object({
  job_id: JobId,
  attempt: z.number().int(),
  /** The job's terminal state (`cancelled`, `timed_out`, `succeeded`, `failed`), `reassigned` (the attempt is no longer this node's) or `unknown`. */
  reason: z.string(),
});
export type StopOrder = z.infer<typeof StopOrder>;

export const HeartbeatResponse = z.object({
  /** Attempts the node must kill now. */
  stop: z.array(StopOrder),
  draining: z.boolean(),
  heartbeat_interval_seconds: z.number().int().positive(),
});
export type HeartbeatResponse = z.infer<typeof HeartbeatResponse>;

export const PollRequest = z.strictObject({
  /** Wait up to this long for an assignment when there is none (long poll). */
  wait_seconds: z.number().int().min(0).max(30).default(0),
  /**
   * The attempts the node runs already. Given (an empty list included), the poll waits
   * while the node holds nothing else, answers with only the attempts not in the list,
   * and lists in `held` which of the node's attempts are still its own. Left out (an
   * agent of an earlier version), every attempt is returned and a node holding any
   * attempt is answered at once.
   */
  known: z.array(RunningAttempt).max(1024).optional(),
});
export type PollRequest = z.infer<typeof PollRequest>;

/** What a node needs to run an attempt. */
export const Assignment = z.object({
  job_id: JobId,
  attempt: z.number().int(),
  name: z.string().nullable(),
  type: z.string(),
  command: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  resources: z.object({ cpu: z.number(), memory_mb: z.number(), gpu: z.number() }),
  timeout_seconds: z.number().int(),
  labels: z.record(z.string(), z.string()),
  metadata: z.record(z.string(), z.string()),
  /**
   * Where to PUT the attempt's artifacts: replace the literal `{artifact_id}` with the
   * artifact's name. Signed for every name of the job, until the job's timeout plus the
   * URL lifetime. Set by the gateway.
   */
  artifact_upload_url: z.string().optional(),
});
export type Assignment = z.infer<typeof Assignment>;

export const PollResponse = z.object({
  /** Attempts to run: every one of the node's, or, when the poll named what it `known`s, only the new ones. */
  jobs: z.array(Assignment),
  /** When the poll named what it knows: each attempt still the node's (new ones included). An attempt the node runs that is missing here ended on the service's side (cancelled, timed out, reassigned): its heartbeat says why. Left out of an answer with new attempts when none of the node's was ended since its last answer. */
  held: z.array(RunningAttempt).optional(),
});
export type PollResponse = z.infer<typeof PollResponse>;

export const JobResultRequest = z.strictObject({
  job_id: JobId,
  attempt: z.number().int().min(1),
  outcome: z.enum(["succeeded", "failed"]),
  exit_code: z.number().int().nullable().default(null),
  error: JobError.strict().optional(),
  usage: JobUsage.optional(),
  /**
   * The node takes another job in the slot this result frees: the answer may carry it in
   * `next`, already started, so the node need not poll for it. Leave it out (or false)
   * while the node drains.
   */
  take_next: z.boolean().optional(),
});
export type JobResultRequest = z.infer<typeof JobResultRequest>;

export const JobResultResponse = z.object({
  job_id: JobId,
  attempt: z.number().int(),
  state: JobState,
  /** True when this exact result had already been recorded (a resend). */
  duplicate: z.boolean(),
  /** With `take_next`: the next attempt for the node, started (as a poll would deliver it); absent when none was ready. */
  next: Assignment.optional(),
});
export type JobResultResponse = z.infer<typeof JobResultResponse>;

export const LogLine = z.strictObject({
  /** Per attempt, from 1, one per line: a resent batch carries the same numbers. */
  seq: z.number().int().min(1),
  stream: z.enum(["stdout", "stderr"]),
  line: z.string().max(65_536),
  ts: Timestamp,
});
export type LogLine = z.infer<typeof LogLine>;

export const PushLogsRequest = z.strictObject({
  job_id: JobId,
  attempt: z.number().int().min(1),
  lines: z.array(LogLine).min(1).max(1000),
});
export type PushLogsRequest = z.infer<typeof PushLogsRequest>;

export const PushLogsResponse = z.object({
  /** Lines stored now. */
  accepted: z.number().int(),
  /** Lines already stored by an earlier push (same `seq`), skipped. */
  duplicates: z.number().int(),
  /** Lines past the job's log cap, not stored (`CJS_LOG_MAX_LINES_PER_JOB`). */
  dropped: z.number().int(),
});
export type PushLogsResponse = z.infer<typeof PushLogsResponse>;

export const NodeStatus = z.enum(["online", "draining", "offline"]);
export type NodeStatus = z.infer<typeof NodeStatus>;

export const DrainNodeRequest = z.strictObject({
  /** Required with a user credential; a node's own key drains that node. */
  node_id: NodeId.optional(),
  /** False lifts a drain. */
  draining: z.boolean().default(true),
});
export type DrainNodeRequest = z.infer<typeof DrainNodeRequest>;

export const NodeUse = z.object({ cpu: z.number(), memory_mb: z.number(), gpu: z.number(), slots: z.number().int() });

export const NodeSummary = z.object({
  node_id: NodeId,
  name: z.string(),
  hostname: z.string(),
  pool_id: z.string(),
  labels: z.record(z.string(), z.string()),
  capacity: z.object({ cpu: z.number(), memory_mb: z.number(), gpu: z.number(), slots: z.number().int() }),
  used: NodeUse,
  job_types: z.array(z.string()),
  /** Caps inherited from the API key that registered the node; null when a JWT registered it. */
  quotas: QuotaLimits.nullable(),
  agent_version: z.string(),
  state: NodeStatus,
  last_heartbeat_at: Timestamp.nullable(),
  created_at: Timestamp,
});
export type NodeSummary = z.infer<typeof NodeSummary>;

export const DrainNodeResponse = z.object({ node: NodeSummary });

export const ListNodesRequest = z.strictObject({
  state: NodeStatus.optional(),
  pool_id: PoolId.optional(),
  /**
   * Also list nodes offline for longer than the registry's `CJS_NODES_HIDE_OFFLINE_AFTER_SECONDS`
   * (hidden by default). Asking for `state: "offline"` lists them too.
   */
  include_offline: z.boolean().default(false),
});
export type ListNodesRequest = z.infer<typeof ListNodesRequest>;

export const ListNodesResponse = z.object({ items: z.array(NodeSummary) });
export type ListNodesResponse = z.infer<typeof ListNodesResponse>;

export const RotateNodeKeyRequest = z.strictObject({
  /** Required with a user credential; a node's own key rotates itself. */
  node_id: NodeId.optional(),
  /** How long the old key keeps working. */
  grace_seconds: z
    .number()
    .int()
    .min(0)
    .max(7 * 86_400)
    .default(0),
});
export type RotateNodeKeyRequest = z.infer<typeof RotateNodeKeyRequest>;

export const RotateNodeKeyResponse = z.object({
  node_id: NodeId,
  api_key: z.string(),
  /** When the previous key stops working. */
  previous_key_expires_at: Timestamp,
});
export type RotateNodeKeyResponse = z.infer<typeof RotateNodeKeyResponse>;

export const DeleteNodeRequest = z.strictObject({ node_id: NodeId });
export type DeleteNodeRequest = z.infer<typeof DeleteNodeRequest>;

export const DeleteNodeResponse = z.object({
  node_id: NodeId,
  deleted_at: Timestamp,
  /** How many of the node's own keys this call retired (0 when an earlier call had). */
  keys_retired: z.number().int().min(0),
});
export type DeleteNodeResponse = z.infer<typeof DeleteNodeResponse>;
