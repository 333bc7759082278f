import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Readable } from "node:stream";
import { z } from "zod";
import {
  EXPORT_MEDIA_TYPES,
  EXPORT_ROUTES,
  type ExportFormat,
  type ExportRoute,
  type UserContext,
} from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { requestRpc } from "../../../shared/nats/index.js";
import type { RequestTrace } from "../../../shared/tracing/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { type Edge, httpCall, type RpcHandler, runRpc } from "../http/register-rpc.js";
import { userContext } from "../rpc/forward.js";
import { openExportBody, type PageReader } from "./export-body.js";
import { type Column, JOB_COLUMNS, LEDGER_COLUMNS } from "./export-columns.js";

/** The longest page the list operations give: the fewest round trips per export. */
const PAGE_SIZE = 200;

/** How one export reads its records and writes them as CSV. */
interface ExportSource<R extends ExportRoute, T> {
  route: R;
  columns: readonly Column<T>[];
  pages: (gw: GatewayContext, caller: UserContext, body: z.infer<R["request"]>, trace: RequestTrace) => PageReader<T>;
}

function exportSource<R extends ExportRoute, T>(source: ExportSource<R, T>): ExportSource<R, T> {
  return source;
}

const JOBS = exportSource({
  route: EXPORT_ROUTES.exportJobs,
  columns: JOB_COLUMNS,
  pages:
    (gw, caller, { format: _format, ...filters }, trace) =>
    (cursor) =>
      requestRpc(
        gw.nc,
        "jobList",
        { caller, body: { ...filters, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } },
        { trace },
      ),
});

const LEDGER = exportSource({
  route: EXPORT_ROUTES.exportLedger,
  columns: LEDGER_COLUMNS,
  pages: (gw, caller, _body, trace) => (cursor) =>
    requestRpc(
      gw.nc,
      "creditLedgerList",
      { caller, body: { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } },
      { trace },
    ),
});

/** `jobs-biz_….csv`, stamped to the second (UTC). */
function fileName(route: ExportRoute, businessId: string, format: ExportFormat, nowMs: number): string {
  const stamp = new Date(nowMs)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  return `${route.fileName}-${businessId}-${stamp}.${format === "csv" ? "csv" : "ndjson"}`;
}

/** What an export's handler hands back: the body to stream and how to name it. */
interface OpenedExport {
  body: Readable;
  format: ExportFormat;
  fileName: string;
}

/**
 * Serves one export through `runRpc`, so it passes the same checks in the same order as
 * every RPC (NATS up, application, a user's credential, rate limit, body schema); then
 * business admins only. Every refusal comes before the first byte and is the error
 * envelope; then the body streams.
 */
function serveExport<R extends ExportRoute, T>(gw: GatewayContext, edge: Edge, source: ExportSource<R, T>) {
  const route = {
    method: "POST",
    path: source.route.path,
    auth: "user",
    scope: source.route.scope,
    request: source.route.request,
    response: z.custom<OpenedExport>(),
    message: "",
    summary: source.route.summary,
  } as const;
  const handler: RpcHandler<typeof route> = async (body, { caller, log, trace }) => {
    if (caller.role !== "admin")
      throw new AppError("permission.denied", "Only an admin of the business can export its records.");
    const { format } = body as { format: ExportFormat };
    const pages = source.pages(gw, userContext(caller), body as z.infer<R["request"]>, trace);
    return {
      body: await openExportBody(pages, format, source.columns, log),
      format,
      fileName: fileName(source.route, caller.business_id, format, gw.clock.now()),
    };
  };
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const opened = await runRpc(edge, route, handler, httpCall(request, reply));
    reply.header("content-type", EXPORT_MEDIA_TYPES[opened.format]);
    reply.header("content-disposition", `attachment; filename="${opened.fileName}"`);
    reply.header("cache-control", "no-store");
    return reply.send(opened.body);
  };
}

/** The export routes (POST, JSON body in, a file out); other methods on their paths answer 405. */
export function registerExportRoutes(app: FastifyInstance, edge: Edge, gw: GatewayContext): void {
  for (const source of [JOBS, LEDGER] as const) {
    app.route({
      method: "POST",
      url: source.route.path,
      config: { auth: "user" },
      handler: serveExport(gw, edge, source as ExportSource<ExportRoute, unknown>),
    });
  }
}
