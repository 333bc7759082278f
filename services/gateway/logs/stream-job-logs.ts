import type { JetStreamManager } from "@nats-io/jetstream";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { JobId, LOG_STREAM_SCOPE, type UserContext } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { Edge } from "../http/register-rpc.js";
import { requireScope } from "../identity/api-key-scopes.js";
import { requestHeader } from "../http/request-header.js";
import { userContext } from "../rpc/forward.js";
import type { JobLogFeeds } from "./job-log-feed.js";
import { logStreamScope, parseStreamCaller } from "./log-stream-url.js";
import { logStreamsOpen } from "./log-stream-metrics.js";
import { LogTail } from "./log-tail.js";
import type { KeyedPacer } from "../rate-limit/pacer.js";
import type { StreamBudget } from "./stream-budget.js";

type StreamRequest = FastifyRequest<{ Params: { jobId: string }; Querystring: Record<string, unknown> }>;

/** Every parameter a signed stream URL may carry besides `expires` and `signature`: the signed caller, and where to resume. */
const STREAM_URL_PARAMS = ["caller", "last_event_id"] as const;

function invalid(path: string, message: string): AppError {
  return new AppError("request.invalid", "The request does not match the schema.", {
    details: { issues: [{ path, message }] },
  });
}

/** Who reads a stream, and the signed URL it was opened with (undefined with a credential). */
interface StreamReader {
  caller: UserContext;
  url: string | undefined;
}

/**
 * Who reads the stream: the signed URL's caller when the query carries a signature (a
 * browser's EventSource cannot send headers), else `X-App-ID` and a user credential.
 * Opening counts as one request against the user's rate limit either way: a signed URL is
 * counted as its user's, so holding streams open through one is no way around the limit.
 */
async function streamReader(
  gw: GatewayContext,
  request: StreamRequest,
  reply: FastifyReply,
  jobId: string,
): Promise<StreamReader> {
  const query = request.query;
  if (query.signature !== undefined || query.caller !== undefined) {
    const callerParam = typeof query.caller === "string" ? query.caller : "";
    gw.urls.verify("GET", logStreamScope(jobId, callerParam), query, STREAM_URL_PARAMS);
    const caller = parseStreamCaller(callerParam);
    await gw.authenticator.resolveApp(caller.app_id);
    await gw.rateLimiter.admitUser(caller.app_id, caller.user_id, reply);
    // The URL grants reading this job's log and nothing else; the scheduler checks the tenancy only.
    return { caller: { ...caller, role: "member", key_id: null, operator: false }, url: String(query.signature) };
  }
  const app = await gw.authenticator.resolveApp(requestHeader(request, "x-app-id"));
  const credentials = {
    authorization: requestHeader(request, "authorization"),
    apiKey: requestHeader(request, "x-api-key"),
  };
  const caller = await gw.authenticator.authenticate(app, credentials, "user", { ip: request.ip });
  if (!caller) throw new AppError("auth.missing_credentials");
  await gw.rateLimiter.admit(caller, reply);
  requireScope(caller, LOG_STREAM_SCOPE);
  return { caller: userContext(caller), url: undefined };
}

/**
 * The position to resume after: `Last-Event-ID` (sent by EventSource when it reconnects),
 * else the `last_event_id` query parameter (for a new EventSource on a fresh signed URL), else 0.
 */
function resumeAfter(request: StreamRequest): number {
  const fromHeader = requestHeader(request, "last-event-id");
  const fromQuery = request.query.last_event_id;
  const [value, path] = fromHeader !== undefined ? [fromHeader, "Last-Event-ID"] : [fromQuery, "last_event_id"];
  if (value === undefined || value === "") return 0;
  if (typeof value !== "string" || !/^\d{1,15}$/.test(value)) throw invalid(path, "the id of an event of this stream");
  return Number(value);
}

/** What every stream of this replica shares: the jobs' feeds, the stream budgets, and the streams open. */
export interface LogStreams {
  feeds: JobLogFeeds;
  budget: StreamBudget;
  /** Stored log bytes read back (replays) a second per business (`CJS_LOG_STREAM_BYTES_PER_SECOND`). */
  bandwidth: KeyedPacer;
  jsm: Promise<JetStreamManager>;
  open: Set<LogTail>;
}

/**
 * `GET /api/compute/jobs/{jobId}/logs`: the job's log as Server-Sent Events. Every check
 * happens before the first byte, so a refusal is the usual JSON error envelope (the
 * stream budgets' 429, the feeds' 503, each with `Retry-After`); after that the reply is
 * the event stream, written on the raw response.
 */
export function streamJobLogs(gw: GatewayContext, edge: Edge, streams: LogStreams) {
  return async (request: StreamRequest, reply: FastifyReply): Promise<void> => {
    if (!edge.natsUp())
      throw new AppError("service.unavailable", "The service is reconnecting to its message bus; try again shortly.", {
        retryAfterSeconds: 1,
      });
    const { jobId } = request.params;
    const { caller, url } = await streamReader(gw, request, reply, jobId);
    if (!JobId.safeParse(jobId).success) throw invalid("jobId", "a job id such as `job_…`");
    const after = resumeAfter(request);
    const giveBack = streams.budget.take({ ...caller, url });
    const tail = new LogTail({
      gw,
      feeds: streams.feeds,
      jsm: streams.jsm,
      bandwidth: streams.bandwidth,
      caller,
      jobId,
      after,
      keepAliveMs: gw.config.CJS_SSE_KEEPALIVE_SECONDS * 1000,
      log: request.log as Logger,
    });
    tail.onClose(giveBack);
    await tail.open();
    streams.open.add(tail);
    logStreamsOpen.inc();
    tail.onClose(() => {
      streams.open.delete(tail);
      logStreamsOpen.dec();
    });
    reply.hijack();
    tail.start(
      reply.raw,
      Object.fromEntries(Object.entries(reply.getHeaders()).map(([name, value]) => [name, String(value)])),
    );
  };
}
