import type { ByteSpan } from "./read-object.js";

/**
 * What a `Range` header asks of content of `size` bytes (RFC 9110 §14): one span, or
 * `unsatisfiable` when it starts beyond the end. No header, another unit, several
 * ranges or a malformed header ask for the whole content (a server may ignore a range).
 */
export function parseByteRange(header: string | undefined, size: number): ByteSpan | "unsatisfiable" | null {
  if (header === undefined) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, first = "", last = ""] = match;
  if (first === "" && last === "") return null;
  if (first === "") {
    // A suffix: the last `last` bytes.
    const length = Number(last);
    if (length === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(size - length, 0), end: size - 1 };
  }
  const start = Number(first);
  if (last !== "" && Number(last) < start) return null;
  if (start >= size) return "unsatisfiable";
  return { start, end: last === "" ? size - 1 : Math.min(Number(last), size - 1) };
}
