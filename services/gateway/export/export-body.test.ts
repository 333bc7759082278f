import fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import type { ExportFormat } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { openExportBody, type Page, type PageReader } from "./export-body.js";
import type { Column } from "./export-columns.js";

interface Row {
  id: string;
  note: string;
}

const COLUMNS: readonly Column<Row>[] = [
  { header: "id", value: (row) => row.id },
  { header: "note", value: (row) => row.note },
];

/** Pages of two rows, `pageCount` of them; the page at `failAt` (1-based) fails, as an owning service that went away would. */
function pages(pageCount: number, failAt?: number): { read: PageReader<Row>; reads: string[] } {
  const reads: string[] = [];
  const read = async (cursor: string | undefined): Promise<Page<Row>> => {
    const index = cursor === undefined ? 1 : Number(cursor);
    reads.push(String(index));
    if (index === failAt) throw new AppError("service.unavailable", "The list is unavailable.");
    const items = [1, 2].map((n) => ({ id: `r${index}.${n}`, note: n === 1 ? "plain" : 'a, "quoted"\nnote' }));
    return { items, next_cursor: index < pageCount ? String(index + 1) : null };
  };
  return { read, reads };
}

let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** Serves the export body at `/` on a real port and answers its base URL. */
async function serve(read: PageReader<Row>, format: ExportFormat): Promise<string> {
  app = fastify();
  app.get("/", async (request, reply) => reply.send(await openExportBody(read, format, COLUMNS, request.log)));
  return app.listen({ port: 0, host: "127.0.0.1" });
}

describe("openExportBody", () => {
  it("writes every page as CSV, header first, quoting as RFC 4180 says", async () => {
    const base = await serve(pages(3).read, "csv");
    const text = await (await fetch(base)).text();
    const rows = text.split("\r\n");
    expect(rows[0]).toBe("id,note");
    expect(text).toContain('r1.2,"a, ""quoted""\nnote"\r\n');
    expect(text.match(/^r\d\.\d,/gm)).toEqual(["r1.1,", "r1.2,", "r2.1,", "r2.2,", "r3.1,", "r3.2,"]);
    expect(text.endsWith("\r\n")).toBe(true);
  });

  it("writes NDJSON one record per line", async () => {
    const base = await serve(pages(2).read, "ndjson");
    const lines = (await (await fetch(base)).text())
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Row);
    expect(lines.map((row) => row.id)).toEqual(["r1.1", "r1.2", "r2.1", "r2.2"]);
  });

  it("a page that fails midway ends NDJSON with an error line", async () => {
    const base = await serve(pages(3, 2).read, "ndjson");
    const response = await fetch(base);
    expect(response.status).toBe(200);
    const lines = (await response.text())
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as unknown);
    expect(lines).toEqual([
      { id: "r1.1", note: "plain" },
      { id: "r1.2", note: 'a, "quoted"\nnote' },
      { error: { code: "service.unavailable", message: "The list is unavailable." } },
    ]);
  });

  it("a page that fails midway cuts a CSV response off, which the client sees as an error", async () => {
    const base = await serve(pages(3, 2).read, "csv");
    const response = await fetch(base);
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
  });

  it("reads the next page only as the body is taken", async () => {
    const { read, reads } = pages(50);
    const body = await openExportBody(read, "ndjson", COLUMNS, fastify().log);
    expect(reads).toEqual(["1"]);
    const chunks = body[Symbol.asyncIterator]();
    await chunks.next();
    expect(reads.length).toBeLessThan(50);
    body.destroy();
  });

  it("a first page that fails is thrown before anything is sent", async () => {
    const { read, reads } = pages(3, 1);
    await expect(openExportBody(read, "csv", COLUMNS, fastify().log)).rejects.toMatchObject({
      code: "service.unavailable",
    });
    expect(reads).toEqual(["1"]);
  });
});
