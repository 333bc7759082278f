import type { ExportDownload } from "../../../sdk/src/index.js";

/** Saves a URL (a signed download, or a blob made here) through the browser's own download. */
export function saveFrom(url: string, name: string): void {
  const anchor = document.createElement("a");
  anchor.href = url;
  anchor.download = name;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
}

/** How long a blob's URL outlives its click: the download has taken its bytes by then. */
const BLOB_URL_LIFE_MS = 60_000;

/** Saves an export as the file the service names (read whole first: exports are the business's records, not bulk data). */
export async function saveExport(file: ExportDownload, fallbackName: string): Promise<void> {
  saveBlob(await new Response(file.body).blob(), file.fileName ?? fallbackName);
}

/** Saves bytes made in the page (a log, an export) as a file. */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  saveFrom(url, name);
  setTimeout(() => URL.revokeObjectURL(url), BLOB_URL_LIFE_MS);
}
