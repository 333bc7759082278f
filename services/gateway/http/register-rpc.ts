import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { scopesOf, successMessage, type RouteAuth, type RpcRoute } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { zodIssues } from "../../../shared/runtime/index.js";
import type { RequestTrace } from "../../../shared/tracing/index.js";
import { requireScope } from "../identity/api-key-scopes.js";
import type { Authenticator, Caller, CredentialHeaders } from "../identity/authenticator.js";
import type { AppRecord } from "../identity/records.js";
import type { NodeCallBudget } from "../rate-limit/node-calls.js";
import type { HeaderSink, RateLimiter } from "../rate-limit/rate-limiter.js";
import { sendSuccess } from "./envelope.js";
import { requestHeader } from "./request-header.js";

/** What a handler gets besides its validated body. */
export interface RpcContext<A extends RouteAuth = RouteAuth> {
  app: AppRecord;
  /** The authenticated caller; `null` only on public routes. */
  caller: A extends "public" ? null : Caller;
  /** The client's address, as fastify resolved it (honouring CJS_TRUST_PROXY); `nats` for a NATS message. */
  ip: string;
  /**
   * `scheme://host[:port]` the client addressed (from `X-Forwarded-*` with CJS_TRUST_PROXY):
   * the base of URLs handed back. Over NATS, `nats://gateway`.
   */
  origin: string;
  /** The request's id and trace context: pass it as `requestRpc`'s `trace` so the services' log lines and spans join the request. */
  trace: RequestTrace;
  log: FastifyBaseLogger;
  /** A header of the request (the first, when sent twice); always `undefined` over NATS, which carries none of a handler's headers. */
  requestHeader(name: string): string | undefined;
  /** Where a handler sets headers of its answer. */
  responseHeaders: HeaderSink;
}

export type RpcHandler<R extends RpcRoute> = (
  body: z.infer<R["request"]>,
  context: RpcContext<R["auth"]>,
) => Promise<z.input<R["response"]>>;

/** What every RPC route needs from the gateway. */
export interface Edge {
  authenticator: Authenticator;
  /** True while the NATS connection is up. */
  natsUp: () => boolean;
  /** Counts the requests of user credentials; refuses them past the limits. */
  rateLimiter: RateLimiter;
  /** Each node's budget of calls with its key; refuses them past it. */
  nodeCalls: NodeCallBudget;
}

/** One call of an operation as any transport received it (HTTP request, NATS message). */
export interface RpcCall {
  appId: string | undefined;
  credentials: CredentialHeaders;
  /** The decoded body; only `undefined` (none was sent) is read as `{}`: a JSON `null` is a body, and refused. */
  body: unknown;
  /** Where the rate-limit headers of a counted call go (the HTTP reply; a NATS reply's headers). */
  responseHeaders: HeaderSink;
  ip: string;
  origin: string;
  trace: RequestTrace;
  log: FastifyBaseLogger;
  /** The request's headers, where the transport has them (HTTP). */
  requestHeader?: (name: string) => string | undefined;
}

/** The body to check: none sent is `{}`; anything sent, `null` included, is checked as it is. */
export function absentAsEmpty(body: unknown): unknown {
  return body === undefined ? {} : body;
}

/**
 * Runs one RPC of the contract whatever the transport: tenant, credential, rate limit,
 * the API key's scope, body validation, handler; returns the checked payload or throws
 * the AppError to answer with.
 */
export async function runRpc<R extends RpcRoute>(
  edge: Edge,
  route: R,
  handler: RpcHandler<R>,
  call: RpcCall,
): Promise<z.infer<R["response"]>> {
  const { authenticator, natsUp, rateLimiter, nodeCalls } = edge;
  // Every operation needs NATS; while it is away, say so at once instead of after a timeout.
  if (!natsUp())
    throw new AppError("service.unavailable", "The service is reconnecting to its message bus; try again shortly.", {
      retryAfterSeconds: 1,
    });
  const tenant = await authenticator.resolveApp(call.appId);
  const caller = await authenticator.authenticate(tenant, call.credentials, route.auth, { ip: call.ip });
  if (caller?.credential.kind === "node_key") nodeCalls.admit(caller.credential.node_id, route);
  else if (caller) await rateLimiter.admit(caller, call.responseHeaders);
  // After the rate limit: a key probing for what it may do still counts.
  for (const scope of scopesOf(route)) requireScope(caller, scope);
  const parsed = route.request.safeParse(absentAsEmpty(call.body));
  if (!parsed.success) {
    throw new AppError("request.invalid", "The request body does not match the schema.", {
      details: { issues: zodIssues(parsed.error) },
    });
  }
  const context = {
    app: tenant,
    caller,
    ip: call.ip,
    origin: call.origin,
    trace: call.trace,
    log: call.log,
    requestHeader: call.requestHeader ?? (() => undefined),
    responseHeaders: call.responseHeaders,
  } as RpcContext<R["auth"]>;
  return route.response.parse(await handler(parsed.data as z.infer<R["request"]>, context)) as z.infer<R["response"]>;
}

/** One HTTP request as `runRpc` takes it: its headers, body and address; the reply receives the rate-limit headers. */
export function httpCall(request: FastifyRequest, reply: FastifyReply): RpcCall {
  return {
    appId: requestHeader(request, "x-app-id"),
    credentials: {
      authorization: requestHeader(request, "authorization"),
      apiKey: requestHeader(request, "x-api-key"),
    },
    body: request.body,
    responseHeaders: reply,
    ip: request.ip,
    origin: `${request.protocol}://${request.host}`,
    trace: request.trace,
    log: request.log,
    requestHeader: (name) => requestHeader(request, name),
  };
}

/**
 * Serves one RPC of the contract over HTTP, answering with the envelope (another method on
 * the same path answers 405 with `Allow: POST`: see wrong-method.ts). `onRequest` runs
 * before the body is read: a refusal there costs no parse.
 */
export function registerRpc<R extends RpcRoute>(
  app: FastifyInstance,
  edge: Edge,
  route: R,
  handler: RpcHandler<R>,
  hooks: { onRequest?: (request: FastifyRequest) => Promise<void> } = {},
): void {
  app.route({
    method: route.method,
    url: route.path,
    config: { auth: route.auth },
    ...(hooks.onRequest ? { onRequest: hooks.onRequest } : {}),
    handler: async (request, reply) => {
      const payload = await runRpc(edge, route, handler, httpCall(request, reply));
      return sendSuccess(reply, successMessage(route, payload), payload);
    },
  });
}
