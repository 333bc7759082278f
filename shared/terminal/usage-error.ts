/**
 * Bad command-line input (a wrong flag or value, an unreadable file): the message says what
 * to give instead. Each CLI prints it and exits with its usage code (`cjs` 64, the operator
 * CLI 2).
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
