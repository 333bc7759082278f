import { createReadStream, createWriteStream, statSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { basename } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { UsageError } from "../exit-codes.js";
import { itemsTable, timeText } from "../output.js";
import { bytesText, ProgressLine } from "../progress.js";
import type { Run } from "../run.js";
import { idOf } from "../choices.js";

/** Counts bytes passing through, for the progress line. */
function counting(onBytes: (total: number) => void): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      total += chunk.length;
      onBytes(total);
      done(null, chunk);
    },
  });
}

export function registerArtifactCommands(program: Command, run: Run): void {
  const artifacts = program
    .command("artifacts")
    .description("A job's artifacts: list, download, upload (downloads are checked against their SHA-256)");
  artifactListCommand(artifacts, run);
  artifactGetCommand(artifacts, run);
  artifactRmCommand(artifacts, run);
  artifactPutCommand(artifacts, run);
}

function artifactListCommand(artifacts: Command, run: Run): void {
  artifacts
    .command("ls")
    .alias("list")
    .description("The artifacts of a job")
    .argument("<job>", "the job id", idOf("job"))
    .action(
      run(async (ctx: CliContext, jobId: string) => {
        const { artifacts: items } = await ctx.client().artifacts.list(jobId);
        ctx.print({ items }, () =>
          itemsTable(ctx.colors, items, "No artifacts.\n", ["NAME", "SIZE", "TYPE", "CREATED", "SHA-256"], (item) => [
            item.artifact_id,
            bytesText(item.size_bytes),
            item.content_type,
            timeText(item.created_at),
            item.sha256.slice(0, 12),
          ]),
        );
      }),
    );
}

function artifactGetCommand(artifacts: Command, run: Run): void {
  artifacts
    .command("get")
    .description("Download an artifact to a file (its name by default; `-o -` for stdout)")
    .argument("<job>", "the job id", idOf("job"))
    .argument("<name>", "the artifact's name")
    .option("-o, --output <path>", "where to write it")
    .action(
      run(async (ctx: CliContext, jobId: string, name: string, options: { output?: string }) => {
        const download = await ctx.client().artifacts.download(jobId, name);
        const progress = new ProgressLine(ctx.io.stderr);
        const body = Readable.fromWeb(download.body as import("node:stream/web").ReadableStream<Uint8Array>).pipe(
          counting((total) => progress.update(`${name} ${bytesText(total)} of ${bytesText(download.sizeBytes)}`)),
        );
        const output = options.output ?? basename(name);
        try {
          if (output === "-") {
            await pipeline(body, ctx.io.stdout, { end: false });
          } else {
            // Written beside, renamed when whole and checked: a failed download leaves no file that looks complete.
            const partial = `${output}.partial`;
            await pipeline(body, createWriteStream(partial)).catch(async (error: unknown) => {
              await rm(partial, { force: true });
              throw error;
            });
            await rename(partial, output);
          }
        } finally {
          progress.done();
        }
        if (output !== "-")
          ctx.print(
            { path: output, sha256: download.sha256, size_bytes: download.sizeBytes },
            () => `${output} (${bytesText(download.sizeBytes)}, sha256 ${download.sha256.slice(0, 12)}… checked)\n`,
          );
      }),
    );
}

function artifactRmCommand(artifacts: Command, run: Run): void {
  artifacts
    .command("rm")
    .alias("delete")
    .description("Delete an artifact of a job")
    .argument("<job>", "the job id", idOf("job"))
    .argument("<name>", "the artifact's name")
    .action(
      run(async (ctx: CliContext, jobId: string, name: string) => {
        const deleted = await ctx.client().artifacts.delete(jobId, name);
        ctx.print(deleted, () => `${deleted.artifact_id} of ${deleted.job_id} deleted\n`);
      }),
    );
}

function artifactPutCommand(artifacts: Command, run: Run): void {
  artifacts
    .command("put")
    .description("Upload a file as an artifact of a job (replaces one of the same name)")
    .argument("<job>", "the job id", idOf("job"))
    .argument("<file>", "the file to upload")
    .option("--name <name>", "the artifact's name (default: the file's name)")
    .option("--content-type <type>", "its media type")
    .action(
      run(async (ctx: CliContext, jobId: string, file: string, options: { name?: string; contentType?: string }) => {
        let size: number;
        try {
          size = statSync(file).size;
        } catch (error) {
          throw new UsageError(`Cannot read ${file}: ${(error as Error).message}`);
        }
        const name = options.name ?? basename(file);
        const progress = new ProgressLine(ctx.io.stderr);
        const body = createReadStream(file).pipe(
          counting((total) => progress.update(`${name} ${bytesText(total)} of ${bytesText(size)}`)),
        );
        const stored = await ctx
          .client()
          .artifacts.upload(jobId, name, body, options.contentType ? { contentType: options.contentType } : {})
          .finally(() => progress.done());
        ctx.print(
          stored,
          () =>
            `${stored.artifact_id} stored (${bytesText(stored.size_bytes)}, sha256 ${stored.sha256.slice(0, 12)}…)\n`,
        );
      }),
    );
}
