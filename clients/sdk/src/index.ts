export { ComputeJobsClient } from "./client.js";
export type { CallOptions, ClientOptions, SubmitJob, WaitOptions } from "./client.js";
export type { Credentials, Tokens } from "./credentials.js";
export { ApiError, IntegrityError, NetworkError } from "./errors.js";
export type { ArtifactBody, ArtifactDownload } from "./artifacts.js";
export type { FollowLogsOptions, LogStreamItem } from "./logs.js";
export type { RetryPolicy } from "./retry-policy.js";
export { RPC_ROUTES } from "./routes.js";
export type { RpcName, RpcRequest, RpcResponse } from "./routes.js";
