import type { z } from "zod";
import {
  CreateApiKeyRequest,
  CreateApiKeyResponse,
  ListApiKeysResponse,
  RevokeApiKeyRequest,
  RevokeApiKeyResponse,
} from "./api-keys.js";
import {
  LoginRequest,
  LogoutRequest,
  LogoutResponse,
  RefreshRequest,
  RequestOtpRequest,
  RequestOtpResponse,
  TokenPair,
  VerifyOtpRequest,
} from "./auth.js";
import { EmptyRequest } from "./common.js";

/**
 * Who may call an operation. Every `/api/...` call also carries `X-App-ID`.
 * - `public`: no credential (sign-in operations).
 * - `jwt`: an interactive session only (`Authorization: Bearer <JWT>`).
 * - `any`: a bearer JWT or an `X-API-Key`.
 */
export type RouteAuth = "public" | "jwt" | "any";

export interface RpcRoute<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType, A extends RouteAuth = RouteAuth> {
  method: "POST";
  path: string;
  auth: A;
  request: Req;
  response: Res;
  /** The envelope's `message` on success. */
  message: string;
  summary: string;
}

function rpc<Req extends z.ZodType, Res extends z.ZodType, A extends RouteAuth>(route: Omit<RpcRoute<Req, Res, A>, "method">): RpcRoute<Req, Res, A> {
  return { method: "POST", ...route };
}

/** Every JSON RPC of the HTTP API: the gateway, the typed client and the OpenAPI document read this table. */
export const RPC_ROUTES = {
  login: rpc({
    path: "/api/auth/LOGIN_EMAIL",
    auth: "public",
    request: LoginRequest,
    response: TokenPair,
    message: "Signed in",
    summary: "Sign in with e-mail and password; returns an access and a refresh token.",
  }),
  requestOtp: rpc({
    path: "/api/auth/request-otp",
    auth: "public",
    request: RequestOtpRequest,
    response: RequestOtpResponse,
    message: "If the address has an account, a code is on its way",
    summary: "Send a six-digit one-time code to the e-mail address.",
  }),
  verifyOtp: rpc({
    path: "/api/auth/verify-otp",
    auth: "public",
    request: VerifyOtpRequest,
    response: TokenPair,
    message: "Signed in",
    summary: "Verify a one-time code; issues the same token pair as a password sign-in.",
  }),
  refresh: rpc({
    path: "/api/auth/refresh",
    auth: "public",
    request: RefreshRequest,
    response: TokenPair,
    message: "Tokens refreshed",
    summary: "Trade a refresh token for a new pair. Reusing a spent refresh token ends its whole session.",
  }),
  logout: rpc({
    path: "/api/auth/logout",
    auth: "public",
    request: LogoutRequest,
    response: LogoutResponse,
    message: "Signed out",
    summary: "End the session of a refresh token; its access tokens stop working too.",
  }),
  createApiKey: rpc({
    path: "/api/compute/api-keys/create",
    auth: "jwt",
    request: CreateApiKeyRequest,
    response: CreateApiKeyResponse,
    message: "API key created; store it now, it is not shown again",
    summary: "Mint an API key for the signed-in user, with optional quotas.",
  }),
  listApiKeys: rpc({
    path: "/api/compute/api-keys/list",
    auth: "any",
    request: EmptyRequest,
    response: ListApiKeysResponse,
    message: "API keys",
    summary: "The caller's API keys, without their secrets.",
  }),
  revokeApiKey: rpc({
    path: "/api/compute/api-keys/revoke",
    auth: "any",
    request: RevokeApiKeyRequest,
    response: RevokeApiKeyResponse,
    message: "API key revoked",
    summary: "Revoke one of the caller's keys; every gateway refuses it from then on.",
  }),
} as const;

export type RpcRoutes = typeof RPC_ROUTES;
export type RpcName = keyof RpcRoutes;
export type RpcRequest<N extends RpcName> = z.input<RpcRoutes[N]["request"]>;
export type RpcResponse<N extends RpcName> = z.infer<RpcRoutes[N]["response"]>;
