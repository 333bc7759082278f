import { writeFile } from "node:fs/promises";
import type { Percentiles } from "./stats.js";
import type { ResultTable } from "./scenario.js";

/** Milliseconds with the precision that matters at that size. */
export function formatMs(ms: number): string {
  if (ms >= 100) return ms.toFixed(0);
  if (ms >= 10) return ms.toFixed(1);
  return ms.toFixed(2);
}

export function formatRate(perSecond: number): string {
  return perSecond >= 100 ? perSecond.toFixed(0) : perSecond.toFixed(1);
}

/** Three cells: p50, p95, p99 in ms, or dashes for an empty sample. */
export function latencyCells(latency: Percentiles | null): string[] {
  return latency === null ? ["–", "–", "–"] : [formatMs(latency.p50), formatMs(latency.p95), formatMs(latency.p99)];
}

/** A plain-text table: numbers right-aligned, text left-aligned. */
export function renderTable(table: ResultTable): string {
  const widths = table.columns.map((column, index) =>
    Math.max(column.length, ...table.rows.map((row) => (row[index] ?? "").length)),
  );
  const numeric = table.columns.map((_, index) => table.rows.every((row) => /^[-–\d.,×x /]*$/.test(row[index] ?? "")));
  const line = (cells: string[]) =>
    cells
      .map((cell, index) => (numeric[index] ? cell.padStart(widths[index]!) : cell.padEnd(widths[index]!)))
      .join("  ")
      .trimEnd();
  const out = [
    table.title,
    line(table.columns),
    widths.map((width) => "-".repeat(width)).join("  "),
    ...table.rows.map(line),
  ];
  for (const note of table.notes) out.push(`  · ${note}`);
  return out.join("\n");
}

/** Writes the run as JSON (Maps become objects). */
export async function writeJson(file: string, value: unknown): Promise<void> {
  const text = JSON.stringify(
    value,
    (_key, item: unknown) => (item instanceof Map ? Object.fromEntries(item) : item),
    2,
  );
  await writeFile(file, `${text}\n`);
}
