export { AppId, Email, EmptyRequest, RecordId, Role, Timestamp } from "./common.js";
export { ErrorEnvelope, SuccessEnvelope } from "./envelope.js";
export {
  LoginRequest,
  LogoutRequest,
  LogoutResponse,
  RefreshRequest,
  RequestOtpRequest,
  RequestOtpResponse,
  TokenPair,
  VerifyOtpRequest,
} from "./auth.js";
export {
  ApiKeyQuotas,
  ApiKeySummary,
  CreateApiKeyRequest,
  CreateApiKeyResponse,
  JobTypeName,
  ListApiKeysResponse,
  RevokeApiKeyRequest,
  RevokeApiKeyResponse,
} from "./api-keys.js";
export { App, Business, CreateAppRequest, CreateBusinessRequest, CreateUserRequest, User } from "./admin.js";
export {
  Artifact,
  ArtifactId,
  ContentType,
  PresignDownloadRequest,
  PresignedUrl,
  PresignUploadRequest,
  RetrieveJobResponse,
} from "./artifacts.js";
export { CreditAmount, Plan, PlanLimits, PlanRates } from "./billing.js";
export { RPC_ROUTES } from "./routes.js";
export type { RouteAuth, RpcName, RpcRequest, RpcResponse, RpcRoute, RpcRoutes } from "./routes.js";
export { buildOpenApiDocument } from "./openapi.js";
export {
  isTerminal,
  Job,
  JobError,
  JobEvent,
  JobId,
  JobPayload,
  JobRef,
  JobState,
  JobSummary,
  JobUsage,
  Labels,
  ListJobsRequest,
  ListJobsResponse,
  PendingReason,
  PoolId,
  Resources,
  SubmitJobRequest,
  SubmitJobResponse,
  TERMINAL_STATES,
} from "./jobs.js";
export {
  JobLogSummary,
  JobLogSummaryCommand,
  LOG_STREAM_ROUTE,
  LogEndEventData,
  LogEventData,
  logStreamPath,
  LogStreamUrlResponse,
} from "./logs.js";
export {
  Assignment,
  DrainNodeRequest,
  DrainNodeResponse,
  HeartbeatRequest,
  HeartbeatResponse,
  JobResultRequest,
  JobResultResponse,
  ListNodesRequest,
  ListNodesResponse,
  LogLine,
  NodeCapacity,
  NodeId,
  NodeStatus,
  NodeSummary,
  NodeUse,
  PollRequest,
  PollResponse,
  PushLogsRequest,
  PushLogsResponse,
  RegisterNodeRequest,
  RegisterNodeResponse,
  RotateNodeKeyRequest,
  RotateNodeKeyResponse,
  RunningAttempt,
  StopOrder,
} from "./nodes.js";
export {
  DrainNodeCommand,
  HeartbeatCommand,
  JobRefCommand,
  JobResultCommand,
  JobTransitionEvent,
  ListJobsCommand,
  ListNodesCommand,
  NodeAssignedEvent,
  NodeContext,
  NodeRefCommand,
  NodeReply,
  PollCommand,
  PollReply,
  PushLogsCommand,
  RegisterNodeCommand,
  RegisterNodeReply,
  SubmitJobCommand,
  UserContext,
} from "./internal.js";
export {
  NATS_UPLOAD_CHUNK_MAX_BYTES,
  NODE_NATS_HEADERS,
  NODE_NATS_OPERATIONS,
  NatsUploadChunkResponse,
  NatsUploadCommitRequest,
  NatsUploadOpenRequest,
  NatsUploadOpenResponse,
} from "./node-nats.js";
export type { NodeNatsOperation } from "./node-nats.js";
