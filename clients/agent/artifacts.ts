import { readdir } from "node:fs/promises";
import { extname, join } from "node:path";
import type { Logger } from "../../shared/runtime/index.js";
import { describeError, retrying } from "./backoff.js";
import type { ArtifactFile, NodePlane } from "./node-plane.js";

/** Media types by file extension, so a download comes back with a useful `Content-Type`. */
const CONTENT_TYPES: Record<string, string> = {
  ".txt": "text/plain; charset=utf-8",
  ".log": "text/plain; charset=utf-8",
  ".csv": "text/csv; charset=utf-8",
  ".json": "application/json",
  ".html": "text/html; charset=utf-8",
  ".xml": "application/xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".svg": "image/svg+xml",
  ".pdf": "application/pdf",
  ".zip": "application/zip",
  ".gz": "application/gzip",
  ".tar": "application/x-tar",
};

export function contentTypeOf(name: string): string {
  return CONTENT_TYPES[extname(name).toLowerCase()] ?? "application/octet-stream";
}

/** A retryable upload failure is tried again for this long before the file is given up. */
const UPLOAD_GIVE_UP_MS = 10 * 60_000;

/**
 * The files to upload: every regular file directly in the artifacts directory. Artifact
 * ids are flat names, so sub-directories are skipped (with a warning), and so are
 * symbolic links, which could point at the agent's own secrets.
 */
export async function listArtifacts(dir: string, logger: Logger): Promise<ArtifactFile[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const files: ArtifactFile[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isFile())
      files.push({ name: entry.name, path: join(dir, entry.name), contentType: contentTypeOf(entry.name) });
    else
      logger.warn(
        { name: entry.name },
        `artifact skipped: only regular files directly in $CJS_ARTIFACTS_DIR are uploaded`,
      );
  }
  return files;
}

/**
 * Uploads each file to the assignment's upload URL, streaming it from disk. A file the
 * service refuses (too large, a bad name) is logged and skipped: it does not stop the
 * result. Returns the names uploaded.
 */
export async function uploadArtifacts(options: {
  files: readonly ArtifactFile[];
  urlTemplate: string;
  plane: Pick<NodePlane, "upload">;
  logger: Logger;
  halt: AbortSignal;
  /** Checked before each file: stop uploading once the attempt was stopped. */
  stillWanted: () => boolean;
}): Promise<string[]> {
  const { files, urlTemplate, plane, logger, halt } = options;
  const uploaded: string[] = [];
  for (const file of files) {
    if (!options.stillWanted()) break;
    try {
      await retrying(() => plane.upload(urlTemplate, file, halt), {
        what: `upload of artifact ${file.name}`,
        logger,
        signal: halt,
        giveUpAfterMs: UPLOAD_GIVE_UP_MS,
      });
      uploaded.push(file.name);
    } catch (error) {
      if (halt.aborted) throw error;
      logger.error({ name: file.name, error: describeError(error) }, "artifact not uploaded");
    }
  }
  return uploaded;
}
