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

/** A length of time as people say it: `850 ms`, `42 s`, `4 min 10 s`, `2 h 5 min`, `3 d 4 h`. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return seconds % 60 === 0 ? `${minutes} min` : `${minutes} min ${seconds % 60} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`;
}

/** A time of day with milliseconds, for log lines. */
export function clockTime(timestamp: string): string {
  const at = new Date(timestamp);
  const time = at.toLocaleTimeString(undefined, {
    hourCycle: "h23",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
  return `${time}.${String(at.getMilliseconds()).padStart(3, "0")}`;
}

/** The problems of a form's check with the contract's schema, as lines to show. */
export function problemsOf(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string[] {
  return issues.map((issue) => `${issue.path.map(String).join(".") || "request"}: ${issue.message}`);
}
