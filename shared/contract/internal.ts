import { z } from "zod";
import { QuotaLimits } from "./api-keys.js";
import { Role } from "./common.js";
import { JobId } from "./ids.js";
import { JobRef, JobState, ListJobsRequest, SubmitJobRequest } from "./jobs.js";
import { CreateScheduleRequest, ListSchedulesRequest, ScheduleRef } from "./schedules.js";
import {
  Assignment,
  DeleteNodeRequest,
  DrainNodeRequest,
  HeartbeatRequest,
  JobResultRequest,
  JobResultResponse,
  ListNodesRequest,
  NodeSummary,
  PollRequest,
  PushLogsRequest,
  RegisterNodeRequest,
  RunningAttempt,
} from "./nodes.js";
import {
  CreateWebhookRequest,
  ListDeliveriesRequest,
  ListWebhooksRequest,
  RetryDeliveryRequest,
  WebhookRef,
} from "./webhooks.js";

/**
 * Messages between the gateway and the services behind it. The gateway authenticates;
 * the services trust the caller context it sends (NATS permissions keep others off these subjects).
 */
export const UserContext = z.object({
  app_id: z.string(),
  business_id: z.string(),
  user_id: z.string(),
  role: Role,
  /** The API key used, when the caller used one. */
  key_id: z.string().nullable(),
  /** The quotas of the API key used; null or absent for a JWT (no limits). */
  quotas: QuotaLimits.nullable().optional(),
  /** Whether the caller's business is the operator's (set where it matters: node registration). */
  operator: z.boolean().default(false),
});
export type UserContext = z.infer<typeof UserContext>;

export const NodeContext = z.object({
  app_id: z.string(),
  business_id: z.string(),
  node_id: z.string(),
});
export type NodeContext = z.infer<typeof NodeContext>;

/** A user request: who asks, and the validated body. */
function asUser<S extends z.ZodType>(body: S) {
  return z.object({ caller: UserContext, body });
}

function asNode<S extends z.ZodType>(body: S) {
  return z.object({ caller: NodeContext, body });
}

/**
 * A submit. `job_id`, set by the gateway for a request with an `Idempotency-Key`, is the
 * id the job is made under: a repeat of the request finds the job made by the first.
 */
export const SubmitJobCommand = asUser(SubmitJobRequest).extend({
  job_id: JobId.optional(),
  /**
   * The gateway chose `job_id` for this request just now (an Idempotency-Key's first claim):
   * no job is under it but one a concurrent repeat made, which the create finds, so the
   * scheduler does not read for one first.
   */
  job_id_new: z.boolean().optional(),
});
/** Webhook RPCs, answered by one webhooks replica. */
export const CreateWebhookCommand = asUser(CreateWebhookRequest);
export const ListWebhooksCommand = asUser(ListWebhooksRequest);
export const WebhookRefCommand = asUser(WebhookRef);
export const ListDeliveriesCommand = asUser(ListDeliveriesRequest);
export const RetryDeliveryCommand = asUser(RetryDeliveryRequest);
export const JobRefCommand = asUser(JobRef);
export const ListJobsCommand = asUser(ListJobsRequest);
export const PollCommand = asNode(PollRequest);
export const JobResultCommand = asNode(JobResultRequest);
export const PushLogsCommand = asNode(PushLogsRequest);
export const HeartbeatCommand = asNode(HeartbeatRequest);
export const RegisterNodeCommand = asUser(RegisterNodeRequest);
export const ListNodesCommand = asUser(ListNodesRequest);
export const CreateScheduleCommand = asUser(CreateScheduleRequest);
export const ScheduleRefCommand = asUser(ScheduleRef);
export const ListSchedulesCommand = asUser(ListSchedulesRequest);
/** Drain by a user (node id in the body) or by the node itself (node id from its key). */
export const DrainNodeCommand = z.object({ caller: z.union([UserContext, NodeContext]), body: DrainNodeRequest });
/** Looks up one node of the caller's business (the gateway checks rights before rotating a key). */
export const NodeRefCommand = z.object({
  caller: z.object({ app_id: z.string(), business_id: z.string() }),
  node_id: z.string(),
});

/** Deletes an offline node of the caller's business; the gateway then retires the node's keys. */
export const DeleteNodeCommand = asUser(DeleteNodeRequest);

/** The node-registry's answer to `DeleteNodeCommand`. */
export const DeleteNodeReply = z.object({ node_id: z.string(), deleted_at: z.string() });
export type DeleteNodeReply = z.infer<typeof DeleteNodeReply>;

/** The node-registry's answer to `RegisterNodeCommand`; the gateway adds the node's key and answers `RegisterNodeResponse`. */
export const RegisterNodeReply = z.object({
  node: NodeSummary,
  /** How often the node must heartbeat, as the registry is configured. */
  heartbeat_interval_seconds: z.number().int().positive(),
});
export type RegisterNodeReply = z.infer<typeof RegisterNodeReply>;

/** The node-registry's answer to `NodeRefCommand` and `DrainNodeCommand`. */
export const NodeReply = z.object({ node: NodeSummary });
export type NodeReply = z.infer<typeof NodeReply>;

/**
 * The scheduler's answer to `PollCommand`: each attempt with its job's tenancy, which may
 * differ from the node's in an operator pool. The gateway signs it into the attempt's
 * artifact upload URL and answers `PollResponse` without it.
 */
/** An attempt as the scheduler hands it to a node, with its job's tenancy for the gateway to sign its upload URL. */
export const DeliveredAttempt = Assignment.extend({ app_id: z.string(), business_id: z.string() });
export type DeliveredAttempt = z.infer<typeof DeliveredAttempt>;

export const PollReply = z.object({
  jobs: z.array(DeliveredAttempt),
  held: z.array(RunningAttempt).optional(),
});
export type PollReply = z.infer<typeof PollReply>;

/**
 * Published (core NATS) on a node's `assigned` event when it gets an assignment (its
 * `released` event, when the service frees one of its attempts, carries the same first
 * three fields), so its long poll answers at once: the attempt, and the whole of it
 * (`delivered`) when the scheduler may hold its start. A gateway whose poll for the node is
 * waiting, and knows the scheduler would tell the node nothing else, then answers the poll
 * from the event and tells the scheduler with `DeliveredCommand` (decision 0096).
 */
export const NodeAssignedEvent = z.object({
  node_id: z.string(),
  job_id: JobId,
  attempt: z.number().int().min(1),
  delivered: DeliveredAttempt.optional(),
});
export type NodeAssignedEvent = z.infer<typeof NodeAssignedEvent>;

/** A gateway gave the node an attempt its `assigned` event carried: the start is held from now, as a poll's would be. */
export const DeliveredCommand = asNode(RunningAttempt);
/** Whether the attempt was still the node's, assigned or running (else the node's next poll learns it is not). */
export const DeliveredReply = z.object({ held: z.boolean() });
export type DeliveredReply = z.infer<typeof DeliveredReply>;

/** The scheduler's answer to `JobResultCommand`: the gateway signs `next`'s upload URL and answers `JobResultResponse`. */
export const JobResultReply = JobResultResponse.extend({ next: DeliveredAttempt.optional() });
export type JobResultReply = z.infer<typeof JobResultReply>;

/**
 * One scheduler replica's part of a jobs list: the ids of its own partitions' jobs of the
 * business that match the listing, newest first, after `after`, at most `count`.
 */
export const ListShardCommand = z.object({
  business: z.object({ app_id: z.string(), business_id: z.string() }),
  listing: ListJobsRequest.omit({ limit: true, cursor: true }),
  after: JobId.optional(),
  count: z.number().int().min(1).max(1000),
});
export type ListShardCommand = z.infer<typeof ListShardCommand>;

export const ListShardReply = z.object({
  ids: z.array(z.string()),
  /** Whether another match follows the last id. */
  more: z.boolean(),
  /** The partitions the answer covers: those the replica owned and had read. */
  partitions: z.array(z.number().int()),
});
export type ListShardReply = z.infer<typeof ListShardReply>;

/** How many jobs of a concurrency key are assigned or running, asked of the replica that owns the key's partition. */
export const ConcurrencyInUseCommand = z.object({ scope: z.string(), partition: z.number().int() });
export const ConcurrencyInUseReply = z.object({ in_use: z.number().int(), owned: z.boolean() });

/** Published (core NATS) when a job reaches a terminal state, for watchers such as the log stream's `end` event. */
export const JobTransitionEvent = z.object({
  app_id: z.string(),
  business_id: z.string(),
  job_id: z.string(),
  state: JobState,
  attempt: z.number().int(),
});
