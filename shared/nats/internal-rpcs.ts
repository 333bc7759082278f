import type { z } from "zod";
import {
  AdminListUsersRequest,
  AdminListUsersResponse,
  AdminSetUserRoleRequest,
  AdminUserRef,
  App,
  ArtifactQuota,
  ArtifactQuotaCommand,
  BillingCallerCommand,
  Business,
  ConcurrencyInUseCommand,
  ConcurrencyInUseReply,
  CreateAppRequest,
  CreateBusinessRequest,
  CreateCheckoutCommand,
  CreateCheckoutResponse,
  CreateScheduleCommand,
  CreateUserRequest,
  CreateWebhookCommand,
  CreditCheckCommand,
  CreditCheckReply,
  DeleteNodeCommand,
  DeleteNodeReply,
  DeliveredCommand,
  DeliveredReply,
  DrainNodeCommand,
  DryRunPlan,
  HeartbeatCommand,
  JobLogSummary,
  JobLogSummaryCommand,
  JobPayload,
  JobRefCommand,
  JobResultCommand,
  JobResultReply,
  KeySpendCommand,
  KeySpendReply,
  ListDeliveriesCommand,
  ListJobsCommand,
  ListLedgerCommand,
  ListNodesCommand,
  ListSchedulesCommand,
  ListShardCommand,
  ListShardReply,
  ListWebhooksCommand,
  LogQuota,
  LogQuotaCommand,
  NodeRefCommand,
  NodeReply,
  PollCommand,
  PollReply,
  PurgeJobDataCommand,
  PurgeJobDataReply,
  PushLogsCommand,
  RegisterNodeCommand,
  RegisterNodeReply,
  RetentionLookupCommand,
  RetentionLookupReply,
  RetryDeliveryCommand,
  RotateKeysRequest,
  RotateKeysResponse,
  RPC_ROUTES,
  SandboxActionCommand,
  SandboxActionReply,
  SandboxSessionCommand,
  SandboxSessionView,
  ScheduleRefCommand,
  SetCreditRequest,
  SetCreditResponse,
  SubmitJobCommand,
  SubmitJobResponse,
  User,
  WebhookCommand,
  WebhookRefCommand,
  WebhookReply,
} from "../contract/index.js";
import { AppError } from "../errors/index.js";
import { subjects } from "./names.js";

/** One internal RPC: the subject it is asked on, the command it takes and the reply it answers. */
interface InternalRpc {
  /** Takes the replica's instance id for an RPC that one replica answers on a subject of its own. */
  subject: (() => string) | ((instance: string) => string);
  command: z.ZodType;
  reply: z.ZodType;
}

/**
 * Every request/reply between the processes, by name: `serveRpc` and `requestRpc` read
 * subject, command and reply from here, so a call site names the RPC and nothing more.
 * It sits in shared/nats because the subjects are built here (`subjects`), on top of the
 * contract's schemas; the HTTP routes' table is `RPC_ROUTES` in shared/contract. An RPC a
 * gateway route forwards answers that route's response.
 */
export const INTERNAL_RPCS = {
  // Operator commands, answered by one gateway replica (the admin CLI sends them).
  adminAppCreate: { subject: subjects.adminAppCreate, command: CreateAppRequest, reply: App },
  adminBusinessCreate: { subject: subjects.adminBusinessCreate, command: CreateBusinessRequest, reply: Business },
  adminUserCreate: { subject: subjects.adminUserCreate, command: CreateUserRequest, reply: User },
  adminUserList: { subject: subjects.adminUserList, command: AdminListUsersRequest, reply: AdminListUsersResponse },
  adminUserDisable: { subject: subjects.adminUserDisable, command: AdminUserRef, reply: User },
  adminUserEnable: { subject: subjects.adminUserEnable, command: AdminUserRef, reply: User },
  adminUserSetRole: { subject: subjects.adminUserSetRole, command: AdminSetUserRoleRequest, reply: User },
  adminKeysRotate: { subject: subjects.adminKeysRotate, command: RotateKeysRequest, reply: RotateKeysResponse },
  /** Answered by one billing replica. */
  adminCreditSet: { subject: subjects.adminCreditSet, command: SetCreditRequest, reply: SetCreditResponse },

  // Jobs, answered by one scheduler replica.
  jobSubmit: { subject: subjects.jobSubmit, command: SubmitJobCommand, reply: SubmitJobResponse },
  /** A submit with `dry_run: true`, asked on the submit's subject: answered with what the submit would do. */
  jobDryRun: { subject: subjects.jobSubmit, command: SubmitJobCommand, reply: DryRunPlan },
  jobRetrieve: { subject: subjects.jobRetrieve, command: JobRefCommand, reply: JobPayload },
  jobList: { subject: subjects.jobList, command: ListJobsCommand, reply: RPC_ROUTES.listJobs.response },
  jobCancel: { subject: subjects.jobCancel, command: JobRefCommand, reply: RPC_ROUTES.cancelJob.response },
  jobRetry: { subject: subjects.jobRetry, command: JobRefCommand, reply: RPC_ROUTES.retryJob.response },
  jobDelete: { subject: subjects.jobDelete, command: JobRefCommand, reply: RPC_ROUTES.deleteJob.response },
  /** Answered by the scheduler replica `instance`: its own partitions' part of a jobs list. */
  jobListShard: { subject: subjects.jobListShard, command: ListShardCommand, reply: ListShardReply },
  /** Answered by the scheduler replica `instance`: jobs of a concurrency key of its partitions in use. */
  concurrencyInUse: {
    subject: subjects.concurrencyInUse,
    command: ConcurrencyInUseCommand,
    reply: ConcurrencyInUseReply,
  },
  nodePoll: { subject: subjects.nodePoll, command: PollCommand, reply: PollReply },
  nodeResult: { subject: subjects.nodeResult, command: JobResultCommand, reply: JobResultReply },
  /**
   * A node's result asked of the owner of the job's partition (address: the partition's
   * number), which holds the job's record and, mostly, placed it and writes its node's
   * reservations: no read, no race. Without an owner, the caller asks `nodeResult`.
   */
  nodeResultOfPartition: {
    subject: subjects.nodeResultOfPartition,
    command: JobResultCommand,
    reply: JobResultReply,
  },
  /**
   * A gateway answered a node's poll from the attempt its `assigned` event carried: the
   * scheduler holds the start from now (decision 0096). Asked of the partition's owner, as
   * a result is; without one, `nodeDelivered`.
   */
  nodeDelivered: { subject: subjects.nodeDelivered, command: DeliveredCommand, reply: DeliveredReply },
  nodeDeliveredOfPartition: {
    subject: subjects.nodeDeliveredOfPartition,
    command: DeliveredCommand,
    reply: DeliveredReply,
  },

  // Schedules, answered by one scheduler replica.
  scheduleCreate: {
    subject: subjects.scheduleCreate,
    command: CreateScheduleCommand,
    reply: RPC_ROUTES.createSchedule.response,
  },
  scheduleList: {
    subject: subjects.scheduleList,
    command: ListSchedulesCommand,
    reply: RPC_ROUTES.listSchedules.response,
  },
  scheduleRetrieve: {
    subject: subjects.scheduleRetrieve,
    command: ScheduleRefCommand,
    reply: RPC_ROUTES.retrieveSchedule.response,
  },
  schedulePause: {
    subject: subjects.schedulePause,
    command: ScheduleRefCommand,
    reply: RPC_ROUTES.pauseSchedule.response,
  },
  scheduleResume: {
    subject: subjects.scheduleResume,
    command: ScheduleRefCommand,
    reply: RPC_ROUTES.resumeSchedule.response,
  },
  scheduleDelete: {
    subject: subjects.scheduleDelete,
    command: ScheduleRefCommand,
    reply: RPC_ROUTES.deleteSchedule.response,
  },

  // Nodes, answered by one node-registry replica.
  nodeRegister: { subject: subjects.nodeRegister, command: RegisterNodeCommand, reply: RegisterNodeReply },
  nodeHeartbeat: { subject: subjects.nodeHeartbeat, command: HeartbeatCommand, reply: RPC_ROUTES.heartbeat.response },
  nodeDrain: { subject: subjects.nodeDrain, command: DrainNodeCommand, reply: RPC_ROUTES.drainNode.response },
  nodeList: { subject: subjects.nodeList, command: ListNodesCommand, reply: RPC_ROUTES.listNodes.response },
  nodeGet: { subject: subjects.nodeGet, command: NodeRefCommand, reply: NodeReply },
  nodeDelete: { subject: subjects.nodeDelete, command: DeleteNodeCommand, reply: DeleteNodeReply },

  // Logs, answered by one log-relay replica; a job's artifacts, by one gateway replica.
  logsPush: { subject: subjects.logsPush, command: PushLogsCommand, reply: RPC_ROUTES.pushLogs.response },
  logsSummary: { subject: subjects.logsSummary, command: JobLogSummaryCommand, reply: JobLogSummary },
  logsPurge: { subject: subjects.logsPurge, command: PurgeJobDataCommand, reply: PurgeJobDataReply },
  artifactsPurge: { subject: subjects.artifactsPurge, command: PurgeJobDataCommand, reply: PurgeJobDataReply },

  // Billing and credit, answered by one billing replica.
  billingPlansList: {
    subject: subjects.billingPlansList,
    command: BillingCallerCommand,
    reply: RPC_ROUTES.listPlans.response,
  },
  billingSubscriptionGet: {
    subject: subjects.billingSubscriptionGet,
    command: BillingCallerCommand,
    reply: RPC_ROUTES.getSubscription.response,
  },
  billingSubscriptionCancel: {
    subject: subjects.billingSubscriptionCancel,
    command: BillingCallerCommand,
    reply: RPC_ROUTES.cancelSubscription.response,
  },
  billingLogQuota: { subject: subjects.billingLogQuota, command: LogQuotaCommand, reply: LogQuota },
  billingArtifactQuota: { subject: subjects.billingArtifactQuota, command: ArtifactQuotaCommand, reply: ArtifactQuota },
  billingRetentionLookup: {
    subject: subjects.billingRetentionLookup,
    command: RetentionLookupCommand,
    reply: RetentionLookupReply,
  },
  billingCheckoutCreate: {
    subject: subjects.billingCheckoutCreate,
    command: CreateCheckoutCommand,
    reply: CreateCheckoutResponse,
  },
  billingWebhookReceive: { subject: subjects.billingWebhookReceive, command: WebhookCommand, reply: WebhookReply },
  billingSandboxSessionGet: {
    subject: subjects.billingSandboxSessionGet,
    command: SandboxSessionCommand,
    reply: SandboxSessionView,
  },
  billingSandboxSessionAct: {
    subject: subjects.billingSandboxSessionAct,
    command: SandboxActionCommand,
    reply: SandboxActionReply,
  },
  creditCheck: { subject: subjects.creditCheck, command: CreditCheckCommand, reply: CreditCheckReply },
  creditLedgerList: {
    subject: subjects.creditLedgerList,
    command: ListLedgerCommand,
    reply: RPC_ROUTES.listLedger.response,
  },
  creditKeySpend: { subject: subjects.creditKeySpend, command: KeySpendCommand, reply: KeySpendReply },

  // Webhooks, answered by one webhooks replica.
  webhookCreate: {
    subject: subjects.webhookCreate,
    command: CreateWebhookCommand,
    reply: RPC_ROUTES.createWebhook.response,
  },
  webhookList: { subject: subjects.webhookList, command: ListWebhooksCommand, reply: RPC_ROUTES.listWebhooks.response },
  webhookDelete: {
    subject: subjects.webhookDelete,
    command: WebhookRefCommand,
    reply: RPC_ROUTES.deleteWebhook.response,
  },
  webhookTest: { subject: subjects.webhookTest, command: WebhookRefCommand, reply: RPC_ROUTES.testWebhook.response },
  webhookDeliveriesList: {
    subject: subjects.webhookDeliveriesList,
    command: ListDeliveriesCommand,
    reply: RPC_ROUTES.listWebhookDeliveries.response,
  },
  webhookDeliveryRetry: {
    subject: subjects.webhookDeliveryRetry,
    command: RetryDeliveryCommand,
    reply: RPC_ROUTES.retryWebhookDelivery.response,
  },
} as const satisfies Record<string, InternalRpc>;

export type InternalRpcs = typeof INTERNAL_RPCS;
export type InternalRpcName = keyof InternalRpcs;
/** What a caller sends (the schema's input: defaults may be left out). */
export type InternalCommand<N extends InternalRpcName> = z.input<InternalRpcs[N]["command"]>;
/** What a handler receives, checked. */
export type ReceivedCommand<N extends InternalRpcName> = z.infer<InternalRpcs[N]["command"]>;
/** What the caller gets, checked. */
export type InternalReply<N extends InternalRpcName> = z.infer<InternalRpcs[N]["reply"]>;
/** The RPCs asked on an addressed subject: the caller names the replica, or the job partition, that answers. */
export type AddressedRpc = {
  [N in InternalRpcName]: Parameters<InternalRpcs[N]["subject"]> extends [] ? never : N;
}[InternalRpcName];

/** An RPC's subject as metrics label it: an address is `*`, so replicas and partitions do not each make a series. */
export function rpcSubjectLabel(name: InternalRpcName, address?: string): string {
  return address === undefined ? rpcSubject(name) : rpcSubject(name, "_").replace("._.", ".*.");
}

/** Where one RPC is asked: for an addressed RPC, on the subject of `address` (a replica, or a job partition). */
export function rpcSubject(name: InternalRpcName, address?: string): string {
  const subject = INTERNAL_RPCS[name].subject as (address?: string) => string;
  if (subject.length > 0 && address === undefined)
    throw new AppError("internal.error", `The RPC ${name} is asked on an addressed subject, and no address was named.`);
  return subject(address);
}
