import type { FastifyRequest } from "fastify";
import type { RouteAuth } from "../../../shared/contract/index.js";
import type { ErrorCode } from "../../../shared/errors/index.js";
import { bearerToken, offersBearer } from "../identity/bearer-token.js";
import { requestHeader } from "./request-header.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The credentials the route accepts, for the challenge of its 401s. */
    auth?: RouteAuth;
  }
}

/** The challenge of routes that take only a node's key: `X-API-Key` is no registered HTTP scheme, so it is named by a parameter. */
const API_KEY_CHALLENGE = 'ApiKey header="X-API-Key"';

/**
 * The `WWW-Authenticate` of a 401 (RFC 9110 §11.6.1): a scheme the route accepts, and for
 * a bearer token that was offered, why it failed (RFC 6750 §3.1). A request that offered
 * no bearer token gets the bare `Bearer` challenge, whatever else was wrong.
 */
export function challengeOf(
  code: ErrorCode,
  accepts: RouteAuth | undefined,
  credentials: { authorization?: string | undefined; apiKey?: string | undefined },
): string {
  if (accepts === "node") return API_KEY_CHALLENGE;
  const { authorization, apiKey } = credentials;
  if (!offersBearer(authorization)) return "Bearer";
  if (code === "auth.token_expired") return 'Bearer error="invalid_token", error_description="expired"';
  if (code !== "auth.invalid_credentials") return "Bearer";
  // A token that cannot be read, or sent beside a key, is a malformed request rather than a bad token.
  if (apiKey !== undefined || bearerToken(authorization ?? "") === undefined) return 'Bearer error="invalid_request"';
  return 'Bearer error="invalid_token"';
}

/** The challenge for a 401 answered to `request`, from its route's `config.auth` and the credentials it sent. */
export function challengeFor(code: ErrorCode, request: FastifyRequest): string {
  return challengeOf(code, request.routeOptions.config.auth, {
    authorization: requestHeader(request, "authorization"),
    apiKey: requestHeader(request, "x-api-key"),
  });
}
