import type { z } from "zod";
import type { Logger } from "./logger.js";

/** A `CJS_*` variable no process reads, and the known name it most likely meant. */
export interface UnknownSetting {
  name: string;
  suggestion?: string;
}

/** A name this close to a known one (edits: insert, delete, replace a character) is taken for a typo of it. */
const TYPO_DISTANCE = 2;

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The variable names a set of config schemas read. */
export function settingNames(schemas: Iterable<z.ZodObject>): ReadonlySet<string> {
  const names = new Set<string>();
  for (const schema of schemas) for (const name of Object.keys(schema.shape)) names.add(name);
  return names;
}

/** The `CJS_*` variables set in `env` that are not in `known`, sorted, each with the closest known name when one is within a typo. */
export function unknownSettings(env: Record<string, string | undefined>, known: ReadonlySet<string>): UnknownSetting[] {
  const unknown: UnknownSetting[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith("CJS_") || known.has(name) || env[name] === undefined) continue;
    let suggestion: string | undefined;
    let closest = TYPO_DISTANCE + 1;
    for (const candidate of known) {
      const distance = editDistance(name, candidate);
      if (distance < closest) [suggestion, closest] = [candidate, distance];
    }
    unknown.push(suggestion === undefined ? { name } : { name, suggestion });
  }
  return unknown;
}

/** Logs one warning listing the `CJS_*` variables in `env` that no process reads; nothing when there are none. */
export function warnUnknownSettings(
  logger: Logger,
  env: Record<string, string | undefined>,
  known: ReadonlySet<string>,
): void {
  const unknown = unknownSettings(env, known);
  if (unknown.length === 0) return;
  const listed = unknown
    .map(({ name, suggestion }) => (suggestion ? `${name} (did you mean ${suggestion}?)` : name))
    .join(", ");
  logger.warn({ unknown_settings: unknown }, `ignoring unknown settings: ${listed}`);
}
