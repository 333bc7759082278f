import { Readable } from "node:stream";
import type { FastifyBaseLogger } from "fastify";
import type { ExportFormat } from "../../../shared/contract/index.js";
import { toAppError } from "../http/to-app-error.js";
import type { Column } from "./export-columns.js";
import { csvRow } from "./csv.js";

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** Reads one page of the owning service's list, from `cursor` (the first page without). */
export type PageReader<T> = (cursor: string | undefined) => Promise<Page<T>>;

/**
 * The export's body. The first page is read before anything is sent, so a refusal there is
 * the caller's to answer with the error envelope. The rest is read page by page as the
 * client takes the body (the stream pulls), so no more than one page is held.
 */
export async function openExportBody<T>(
  read: PageReader<T>,
  format: ExportFormat,
  columns: readonly Column<T>[],
  log: FastifyBaseLogger,
): Promise<Readable> {
  const first = await read(undefined);
  return Readable.from(exportChunks(first, read, format, columns, log), { objectMode: false });
}

/**
 * One chunk per page. A page that cannot be read midway ends an NDJSON export with a last
 * line `{"error":{"code","message"}}`; a CSV export has no such line, so it is cut off
 * instead: the response ends without its last chunk, which HTTP clients report as an error.
 */
async function* exportChunks<T>(
  first: Page<T>,
  read: PageReader<T>,
  format: ExportFormat,
  columns: readonly Column<T>[],
  log: FastifyBaseLogger,
): AsyncGenerator<string> {
  const line =
    format === "csv"
      ? (record: T) => csvRow(columns.map((column) => column.value(record)))
      : (record: T) => `${JSON.stringify(record)}\n`;
  if (format === "csv") yield csvRow(columns.map((column) => column.header));
  let page = first;
  for (;;) {
    if (page.items.length > 0) yield page.items.map(line).join("");
    if (page.next_cursor === null) return;
    try {
      page = await read(page.next_cursor);
    } catch (error) {
      const appError = toAppError(error);
      log.warn({ code: appError.code }, "export ended early");
      if (format === "csv") throw appError;
      yield `${JSON.stringify({ error: { code: appError.code, message: appError.message } })}\n`;
      return;
    }
  }
}
