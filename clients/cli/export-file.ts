import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { pipeline } from "node:stream/promises";
import type { ExportDownload } from "../sdk/src/index.js";
import type { CliContext } from "./context.js";
import { bytesText, ProgressLine } from "./progress.js";

/**
 * Writes an export to stdout (`-`, the default) or a file, as it streams. A file is written
 * beside and renamed when whole, so a cut-off export never looks complete.
 */
export async function saveExport(ctx: CliContext, opened: ExportDownload, output: string): Promise<void> {
  const body = Readable.fromWeb(opened.body as WebReadableStream<Uint8Array>);
  if (output === "-") {
    await pipeline(body, ctx.io.stdout, { end: false });
    return;
  }
  const progress = new ProgressLine(ctx.io.stderr);
  let total = 0;
  body.on("data", (chunk: Buffer) => progress.update(`${output} ${bytesText((total += chunk.length))}`));
  const partial = `${output}.partial`;
  try {
    await pipeline(body, createWriteStream(partial));
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  } finally {
    progress.done();
  }
  await rename(partial, output);
  ctx.note(`${output} (${bytesText(total)})`);
}
