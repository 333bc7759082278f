import { EXPORT_ROUTES, type ExportName } from "../../../shared/contract/index.js";
import type { z } from "zod";
import type { Transport } from "./transport.js";

export { EXPORT_ROUTES };

export type ExportRequest<N extends ExportName> = z.input<(typeof EXPORT_ROUTES)[N]["request"]>;

/** An export as it streams: the file's bytes, its media type and the name the service suggests. */
export interface ExportDownload {
  body: ReadableStream<Uint8Array>;
  contentType: string;
  fileName: string | null;
}

/**
 * Opens an export. A refusal comes before the first byte, as an ApiError; a failure
 * midway ends an NDJSON file with a last line `{"error":{…}}` and cuts a CSV file short
 * (docs/api.md, "Export").
 */
export async function openExport(
  transport: Transport,
  path: string,
  request: unknown,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<ExportDownload> {
  const response = await transport.request("POST", path, JSON.stringify(request), {
    idempotent: true,
    signal: options.signal,
  });
  const disposition = response.headers.get("content-disposition") ?? "";
  return {
    body: response.body!,
    contentType: response.headers.get("content-type") ?? "application/octet-stream",
    fileName: /filename="([^"]+)"/.exec(disposition)?.[1] ?? null,
  };
}
