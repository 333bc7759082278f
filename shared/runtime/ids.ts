import { randomInt } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` characters drawn uniformly from base62 with a CSPRNG (5.95 bits each). */
export function randomBase62(length: number): string {
  let text = "";
  for (let index = 0; index < length; index += 1) text += BASE62[randomInt(62)];
  return text;
}

/** A fixed-width base62 rendering of a non-negative integer. */
export function toBase62(value: number, width: number): string {
  let rest = value;
  let text = "";
  while (rest > 0) {
    text = BASE62[rest % 62] + text;
    rest = Math.floor(rest / 62);
  }
  return text.padStart(width, "0");
}

/** The integer a base62 text stands for (`toBase62`'s inverse); NaN when a character is not base62. */
export function fromBase62(text: string): number {
  let value = 0;
  for (const char of text) {
    const digit = BASE62.indexOf(char);
    if (digit < 0) return Number.NaN;
    value = value * 62 + digit;
  }
  return value;
}

/** A record id: `<prefix>_` and 20 random base62 characters (119 bits), e.g. `biz_…`, `usr_…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(20)}`;
}

/** A job id that sorts by creation time: `job_`, 8 base62 characters of milliseconds, then 12 random. */
export function newJobId(nowMs: number): string {
  return `job_${toBase62(nowMs, 8)}${randomBase62(12)}`;
}
