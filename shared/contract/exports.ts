import { z } from "zod";
import type { Scope } from "./api-keys.js";
import { ListJobsRequest } from "./jobs.js";

/**
 * Exports: a business's records as one streamed file, not as the JSON envelope. They are
 * POST routes outside `RPC_ROUTES` (their answer is a body, not a payload); the gateway and
 * the OpenAPI document read this table.
 */

/** `csv`: a header row, then one row per record (RFC 4180). `ndjson`: one JSON object per line. */
export const ExportFormat = z.enum(["csv", "ndjson"]);
export type ExportFormat = z.infer<typeof ExportFormat>;

/** The media type of each format. */
export const EXPORT_MEDIA_TYPES: Record<ExportFormat, string> = {
  csv: "text/csv; charset=utf-8",
  ndjson: "application/x-ndjson; charset=utf-8",
};

/** The business's jobs, newest first, with `jobs/list`'s filters. */
export const ExportJobsRequest = ListJobsRequest.omit({ limit: true, cursor: true }).extend({ format: ExportFormat });
export type ExportJobsRequest = z.infer<typeof ExportJobsRequest>;

/** The business's whole credit ledger, newest first. */
export const ExportLedgerRequest = z.strictObject({ format: ExportFormat });
export type ExportLedgerRequest = z.infer<typeof ExportLedgerRequest>;

export interface ExportRoute<Req extends z.ZodType = z.ZodType> {
  path: string;
  request: Req;
  /** The start of the attachment's file name. */
  fileName: string;
  /** The scope a user's API key needs (docs/api.md, "Scopes"). */
  scope: Scope;
  summary: string;
}

export const EXPORT_ROUTES = {
  exportJobs: {
    path: "/api/compute/jobs/export",
    request: ExportJobsRequest,
    fileName: "jobs",
    scope: "jobs:read",
    summary: "Stream the business's jobs (business admins only) as CSV or NDJSON, with jobs/list's filters.",
  },
  exportLedger: {
    path: "/api/compute/billing/ledger/export",
    request: ExportLedgerRequest,
    fileName: "ledger",
    scope: "billing:read",
    summary: "Stream the business's credit ledger (business admins only) as CSV or NDJSON.",
  },
} as const satisfies Record<string, ExportRoute>;

export type ExportName = keyof typeof EXPORT_ROUTES;
