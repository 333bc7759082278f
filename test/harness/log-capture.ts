import { EventEmitter } from "node:events";
import { createLogger, type Logger } from "../../shared/runtime/index.js";

/** One parsed log line. */
export type LogLine = Record<string, unknown> & { msg?: string };

/**
 * Production loggers whose lines a test reads: every raw line kept (to search for what
 * must never be logged), and a wait for a line that matches, without polling.
 */
export class LogCapture {
  readonly raw: string[] = [];
  private readonly parsed: LogLine[] = [];
  private readonly events = new EventEmitter();

  logger(service: string, level: "info" | "trace" = "info"): Logger {
    const write = (line: string) => {
      this.raw.push(line);
      const parsed = JSON.parse(line) as LogLine;
      this.parsed.push(parsed);
      this.events.emit("line", parsed);
    };
    return createLogger({ service, level, destination: { write } });
  }

  /** How many lines were logged so far: give it to `waitFor` to look only at later ones. */
  mark(): number {
    return this.parsed.length;
  }

  /** The first line at or after `from` (a `mark`), logged before or after the call, that satisfies `match`. */
  waitFor(match: (line: LogLine) => boolean, from = 0): Promise<LogLine> {
    const found = this.parsed.slice(from).find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => {
      const listen = (line: LogLine) => {
        if (!match(line)) return;
        this.events.off("line", listen);
        resolve(line);
      };
      this.events.on("line", listen);
    });
  }
}
