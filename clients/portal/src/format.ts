/** Dates and numbers as the pages show them. */
export function when(timestamp: string | null | undefined): string {
  if (timestamp === null || timestamp === undefined) return "—";
  return new Date(timestamp).toLocaleString(undefined, { dateStyle: "short", timeStyle: "medium" });
}

export function credits(amount: number | null | undefined): string {
  return amount === null || amount === undefined ? "—" : amount.toLocaleString(undefined, { maximumFractionDigits: 6 });
}

export function bytes(size: number): string {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KiB`;
  return `${(size / 1024 / 1024).toFixed(1)} MiB`;
}

/** `KEY=value` lines (env, labels) as a record; blank lines are skipped. */
export function pairs(text: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const at = line.indexOf("=");
    if (at < 0) result[line.trim()] = "";
    else result[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return result;
}

/** A number field: empty is absent. */
export function optionalNumber(text: string): number | undefined {
  return text.trim() === "" ? undefined : Number(text);
}
