import { UsageError } from "./exit-codes.js";

/** The values of a repeatable flag (`--label a=1 --label b=2`), in order. */
export const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** A flag's number; undefined when the flag was not given. Anything but a number is a usage error naming the flag. */
export function numberOf(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isFinite(value)) throw new UsageError(`${flag} takes a number, not "${text}".`);
  return value;
}

/** A flag's whole number (digits only); undefined when the flag was not given. */
export function wholeNumberOf(flag: string, text: string | undefined, what = "a whole number"): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`${flag} takes ${what}, not "${text}".`);
  return Number(text);
}
