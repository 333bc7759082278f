/**
 * The one line that says what the bench is doing now, on stderr so stdout keeps only the
 * results. On a terminal it is rewritten in place; otherwise a line is written at most
 * every few seconds, so a CI log stays short.
 */
export class Progress {
  private label = "";
  private lastWrittenMs = 0;
  private readonly tty: boolean;

  constructor(
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly plainEveryMs = 2_000,
  ) {
    this.tty = stream.isTTY === true;
  }

  /** Starts a new step: `label` prefixes each update until the next `step`. */
  step(label: string): void {
    this.clear();
    this.label = label;
    this.lastWrittenMs = 0;
    this.write(`${label} …`, true);
  }

  update(text: string): void {
    this.write(`${this.label}  ${text}`, false);
  }

  /** Ends the step's line; the next output starts on a fresh line. */
  clear(): void {
    if (this.tty && this.label !== "") this.stream.write("\r\x1b[2K");
  }

  /** A message that stays (a warning, a note), above the progress line. */
  note(text: string): void {
    this.clear();
    this.stream.write(`${text}\n`);
  }

  private write(text: string, force: boolean): void {
    if (this.tty) {
      this.stream.write(`\r\x1b[2K${text.slice(0, (this.stream.columns ?? 120) - 1)}`);
      return;
    }
    const now = performance.now();
    if (!force && now - this.lastWrittenMs < this.plainEveryMs) return;
    this.lastWrittenMs = now;
    this.stream.write(`${text}\n`);
  }
}
