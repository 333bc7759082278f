import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import {
  EXPORT_MEDIA_TYPES,
  EXPORT_ROUTES,
  type ExportFormat,
  type ExportRoute,
  ListJobsResponse,
  ListLedgerResponse,
  type UserContext,
} from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { requestRpc, subjects } from "../../../shared/nats/index.js";
import { zodIssues } from "../../../shared/runtime/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { absentAsEmpty, type Edge } from "../http/register-rpc.js";
import { requestHeader } from "../http/request-header.js";
import { userContext } from "../rpc/forward.js";
import { openExportBody, type PageReader } from "./export-body.js";
import { type Column, JOB_COLUMNS, LEDGER_COLUMNS } from "./export-columns.js";

/** The longest page the list operations give: the fewest round trips per export. */
const PAGE_SIZE = 200;

/** How one export reads its records and writes them as CSV. */
interface ExportSource<R extends ExportRoute, T> {
  route: R;
  columns: readonly Column<T>[];
  pages: (gw: GatewayContext, caller: UserContext, body: z.infer<R["request"]>, request: FastifyRequest) => PageReader<T>;
}

function exportSource<R extends ExportRoute, T>(source: ExportSource<R, T>): ExportSource<R, T> {
  return source;
}

const JOBS = exportSource({
  route: EXPORT_ROUTES.exportJobs,
  columns: JOB_COLUMNS,
  pages: (gw, caller, { format: _format, ...filters }, request) => (cursor) =>
    requestRpc(gw.nc, subjects.jobList(), { caller, body: { ...filters, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } }, ListJobsResponse, { trace: request.trace }),
});

const LEDGER = exportSource({
  route: EXPORT_ROUTES.exportLedger,
  columns: LEDGER_COLUMNS,
  pages: (gw, caller, _body, request) => (cursor) =>
    requestRpc(gw.nc, subjects.creditLedgerList(), { caller, body: { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } }, ListLedgerResponse, { trace: request.trace }),
});

/** `jobs-biz_….csv`, stamped to the second (UTC). */
function fileName(route: ExportRoute, businessId: string, format: ExportFormat, nowMs: number): string {
  const stamp = new Date(nowMs).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  return `${route.fileName}-${businessId}-${stamp}.${format === "csv" ? "csv" : "ndjson"}`;
}

/**
 * Serves one export: the same checks as an RPC (NATS up, application, a user's credential,
 * rate limit, body schema), then business admins only. Every refusal comes before the first
 * byte and is the error envelope; then the body streams.
 */
function serveExport<R extends ExportRoute, T>(gw: GatewayContext, edge: Edge, source: ExportSource<R, T>) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (!edge.natsUp()) throw new AppError("service.unavailable", "The service is reconnecting to its message bus; try again shortly.", { retryAfterSeconds: 1 });
    const tenant = await edge.authenticator.resolveApp(requestHeader(request, "x-app-id"));
    const caller = await edge.authenticator.authenticate(tenant, { authorization: requestHeader(request, "authorization"), apiKey: requestHeader(request, "x-api-key") }, "user");
    if (!caller) throw new AppError("auth.missing_credentials");
    await edge.rateLimiter.admit(caller, reply);
    const parsed = source.route.request.safeParse(absentAsEmpty(request.body));
    if (!parsed.success) throw new AppError("request.invalid", "The request body does not match the schema.", { details: { issues: zodIssues(parsed.error) } });
    if (caller.role !== "admin") throw new AppError("permission.denied", "Only an admin of the business can export its records.");
    const body = parsed.data as z.infer<R["request"]>;
    const format = (body as { format: ExportFormat }).format;
    const stream = await openExportBody(source.pages(gw, userContext(caller), body, request), format, source.columns, request.log);
    reply.header("content-type", EXPORT_MEDIA_TYPES[format]);
    reply.header("content-disposition", `attachment; filename="${fileName(source.route, caller.business_id, format, gw.clock.now())}"`);
    reply.header("cache-control", "no-store");
    return reply.send(stream);
  };
}

/** The export routes (POST, JSON body in, a file out); other methods on their paths answer 405. */
export function registerExportRoutes(app: FastifyInstance, edge: Edge, gw: GatewayContext): void {
  for (const source of [JOBS, LEDGER] as const) {
    app.route({ method: "POST", url: source.route.path, config: { auth: "user" }, handler: serveExport(gw, edge, source as ExportSource<ExportRoute, unknown>) });
    app.route({
      method: ["GET", "PUT", "PATCH", "DELETE"],
      url: source.route.path,
      handler: async (_request, reply) => {
        reply.header("allow", "POST");
        throw new AppError("route.method_not_allowed", "Use POST for this path.", { details: { allow: ["POST"] } });
      },
    });
  }
}
