import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { FastifyInstance } from "fastify";
import { LOG_STREAM_ROUTE, RPC_ROUTES } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { registerRpc, type Edge } from "../http/register-rpc.js";
import { logStreamUrl } from "./log-stream-url.js";
import { JobLogFeeds } from "./job-log-feed.js";
import type { LogTail } from "./log-tail.js";
import { KeyedPacer } from "../rate-limit/pacer.js";
import { StreamBudget } from "./stream-budget.js";
import { type LogStreams, streamJobLogs } from "./stream-job-logs.js";

/** The job log routes: the SSE stream, its signed-URL RPC, and 405 for other methods on the stream's path. */
export function registerLogRoutes(app: FastifyInstance, edge: Edge, gw: GatewayContext): void {
  registerRpc(app, edge, RPC_ROUTES.logStreamUrl, logStreamUrl(gw));

  const { config } = gw;
  const jsm = jetstreamManager(gw.nc, { checkAPI: false });
  const streams: LogStreams = {
    feeds: new JobLogFeeds(jetstream(gw.nc), jsm, config.CJS_LOG_STREAM_JOBS_MAX),
    budget: new StreamBudget({
      per_user: config.CJS_LOG_STREAMS_PER_USER,
      per_url: config.CJS_LOG_STREAMS_PER_URL,
      per_business: config.CJS_LOG_STREAMS_PER_BUSINESS,
    }),
    // A fifth of the second at once, as requests are shaped: a megabyte message waits its share, not a burst.
    bandwidth: new KeyedPacer({
      perSecond: config.CJS_LOG_STREAM_BYTES_PER_SECOND,
      burst: Math.ceil(config.CJS_LOG_STREAM_BYTES_PER_SECOND / 5),
    }),
    jsm,
    open: new Set<LogTail>(),
  };
  app.route({
    method: "GET",
    url: LOG_STREAM_ROUTE,
    exposeHeadRoute: false,
    config: { auth: "user" },
    handler: streamJobLogs(gw, edge, streams),
  });
  // Open streams would hold the server open: end them (clients resume elsewhere with Last-Event-ID).
  app.addHook("preClose", async () => {
    for (const tail of streams.open) tail.close();
    await streams.feeds.closeAll();
  });
}
