/**
 * Cheap checks of the fields a picture reads from a job record as the watch decoded it.
 * Every replica runs them for every revision of its partitions, so they are plain `typeof`
 * tests rather than a schema: a face reads a few fields, and a record that lacks one is
 * not the kind of job the picture keeps (it is skipped, never a crash of the watch).
 */
export type Fields = Record<string, unknown>;

export function isString(value: unknown): value is string {
  return typeof value === "string";
}

export function isNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

export function isStringOrNull(value: unknown): value is string | null {
  return value === null || typeof value === "string";
}

/** A string, null, or absent (a field older records may not have). */
export function isOptionalString(value: unknown): value is string | null | undefined {
  return value === undefined || value === null || typeof value === "string";
}

export function isStringMap(value: unknown): value is Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  for (const entry of Object.values(value)) if (typeof entry !== "string") return false;
  return true;
}

export function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every(isString);
}

/** A job's `concurrency` as placement reads it, null when it has none; undefined when it is malformed. */
export function concurrencyOf(value: unknown): { key: string; max_running: number } | null | undefined {
  if (value === undefined || value === null) return null;
  if (typeof value !== "object") return undefined;
  const { key, max_running } = value as Fields;
  return isString(key) && isNumber(max_running) ? { key, max_running } : undefined;
}

/** A job's `resources`, or undefined when malformed. */
export function resourcesOf(value: unknown): { cpu: number; memory_mb: number; gpu: number } | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { cpu, memory_mb, gpu } = value as Fields;
  return isNumber(cpu) && isNumber(memory_mb) && isNumber(gpu) ? { cpu, memory_mb, gpu } : undefined;
}
