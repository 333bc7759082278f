import { createColors } from "picocolors";

/** Where a command writes, and what kind of terminal it writes to. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

export type Colors = ReturnType<typeof createColors>;

/** Colours only when stdout is a terminal and NO_COLOR is not set (FORCE_COLOR forces them). */
export function colorsFor(io: CliIo): Colors {
  const forced = io.env.FORCE_COLOR !== undefined && io.env.FORCE_COLOR !== "0";
  return createColors(forced || (io.stdout.isTTY === true && io.env.NO_COLOR === undefined && io.env.TERM !== "dumb"));
}

/** A state word, coloured by how it ended. */
export function stateText(colors: Colors, state: string): string {
  if (state === "succeeded") return colors.green(state);
  if (state === "failed" || state === "timed_out") return colors.red(state);
  if (state === "cancelled") return colors.yellow(state);
  return colors.cyan(state);
}

/** The visible width of a cell (colour codes take no room). */
function width(text: string): number {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, "").length;
}

/** Rows under a header, in columns padded to the widest cell. */
export function table(header: string[], rows: string[][], colors: Colors): string {
  const widths = header.map((title, column) => Math.max(width(title), ...rows.map((row) => width(row[column] ?? ""))));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column === cells.length - 1 ? cell : cell + " ".repeat((widths[column] ?? 0) - width(cell)),
      )
      .join("  ")
      .trimEnd();
  return [colors.bold(line(header)), ...rows.map(line)].join("\n") + "\n";
}

/** `2026-11-24T01:02:03.456Z` → `2026-11-24 01:02:03`; `-` for none. */
export function timeText(iso: string | null | undefined): string {
  return iso
    ? iso
        .replace("T", " ")
        .replace(/\.\d+Z$/, "")
        .replace(/Z$/, "")
    : "-";
}

/** Prints a payload as JSON for scripts: one document, two-space indented. */
export function printJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Items as a table, or `empty` when there are none; a page with more after it says how to ask for the next one. */
export function itemsTable<T>(
  colors: Colors,
  items: readonly T[],
  empty: string,
  header: string[],
  row: (item: T) => string[],
  nextCursor?: string | null,
): string {
  if (items.length === 0) return empty;
  return table(header, items.map(row), colors) + (nextCursor ? colors.dim(`More: --cursor ${nextCursor}\n`) : "");
}
