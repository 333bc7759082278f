/**
 * One line on stderr that rewrites itself (waiting, uploading): only on a terminal, so
 * logs and pipes get no carriage returns; `done` clears it.
 */
export class ProgressLine {
  private shown = false;

  constructor(private readonly stderr: NodeJS.WritableStream & { isTTY?: boolean }) {}

  update(text: string): void {
    if (this.stderr.isTTY !== true) return;
    this.stderr.write(`\r\x1b[2K${text}`);
    this.shown = true;
  }

  done(): void {
    if (!this.shown) return;
    this.stderr.write("\r\x1b[2K");
    this.shown = false;
  }
}

/** `1536` → `1.5 KiB`. */
export function bytesText(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}
