/** One CSV cell's value: text, a number, a boolean, or nothing (an empty cell). */
export type CsvCell = string | number | boolean | null;

/** Text a spreadsheet would run as a formula (OWASP "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * A cell as RFC 4180 writes it: quoted when it holds a comma, a quote or a line break,
 * quotes doubled. Text that a spreadsheet would read as a formula gets a leading `'`;
 * numbers are ours and written as they are (a negative amount stays a number).
 */
export function csvCell(value: CsvCell): string {
  if (value === null) return "";
  if (typeof value !== "string") return String(value);
  const guarded = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(guarded) ? `"${guarded.replaceAll('"', '""')}"` : guarded;
}

/** One record, CRLF-terminated as RFC 4180 says. */
export function csvRow(cells: readonly CsvCell[]): string {
  return `${cells.map(csvCell).join(",")}\r\n`;
}
