import { closeSync, openSync, writeSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { LogLine } from "../../shared/contract/index.js";

/**
 * An append-only JSONL file of an attempt's numbered log lines, written before a line is
 * sent. After a crash of the agent the next start resends every spooled line the service
 * had not acknowledged, under the same `seq`: nothing is lost and nothing doubled.
 */
export class LogSpool {
  private constructor(private fd: number | null) {}

  static open(path: string): LogSpool {
    return new LogSpool(openSync(path, "a", 0o600));
  }

  /**
   * Synchronous on purpose: once it returns, the lines are in the kernel's hands and
   * survive the agent being killed, and they reach the file in the order they were numbered.
   */
  append(lines: readonly LogLine[]): void {
    if (this.fd === null || lines.length === 0) return;
    const bytes = Buffer.from(lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
    for (let written = 0; written < bytes.length; ) written += writeSync(this.fd, bytes, written);
  }

  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
  }

  /** Every well-formed line of a spool, in file order; a torn last line (a crash mid-write) is skipped. */
  static async read(path: string): Promise<LogLine[]> {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const lines: LogLine[] = [];
    for (const row of text.split("\n")) {
      if (row === "") continue;
      try {
        lines.push(LogLine.parse(JSON.parse(row)));
      } catch {
        // Only the last row can be torn; anything unreadable is skipped rather than stop the resend.
      }
    }
    return lines;
  }
}
