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
export { RPC_ROUTES } from "./routes.js";
export type { RouteAuth, RpcName, RpcRequest, RpcResponse, RpcRoute, RpcRoutes } from "./routes.js";
export { buildOpenApiDocument } from "./openapi.js";
