import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { FastifyInstance } from "fastify";
import { LOG_STREAM_ROUTE, RPC_ROUTES } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { registerRpc, type Edge } from "../http/register-rpc.js";
import { logStreamUrl } from "./log-stream-url.js";
import type { LogTail } from "./log-tail.js";
import { streamJobLogs } from "./stream-job-logs.js";

/** The job log routes: the SSE stream, its signed-URL RPC, and 405 for other methods on the stream's path. */
export function registerLogRoutes(app: FastifyInstance, edge: Edge, gw: GatewayContext): void {
  registerRpc(app, edge, RPC_ROUTES.logStreamUrl, logStreamUrl(gw));

  const open = new Set<LogTail>();
  const nats = { js: jetstream(gw.nc), jsm: jetstreamManager(gw.nc, { checkAPI: false }) };
  app.route({
    method: "GET",
    url: LOG_STREAM_ROUTE,
    exposeHeadRoute: false,
    config: { auth: "user" },
    handler: streamJobLogs(gw, edge, nats, open),
  });
  // Open streams would hold the server open: end them (clients resume elsewhere with Last-Event-ID).
  app.addHook("preClose", async () => {
    for (const tail of open) tail.close();
  });
}
