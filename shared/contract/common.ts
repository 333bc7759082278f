import { z } from "zod";

/** ISO-8601 UTC timestamp as written by the service (`2026-11-22T10:00:00.000Z`). */
export const Timestamp = z.iso.datetime();
export type Timestamp = z.infer<typeof Timestamp>;

/** An e-mail address as browsers accept it (so `admin@localhost` is valid), compared in lower case. */
export const Email = z
  .email({ pattern: z.regexes.html5Email })
  .max(254)
  .transform((value) => value.toLowerCase());

export const Role = z.enum(["admin", "member"]);
export type Role = z.infer<typeof Role>;

/** An empty request body (or `{}`). */
export const EmptyRequest = z.strictObject({});
export type EmptyRequest = z.infer<typeof EmptyRequest>;

/** Whether an amount of credits has at most six decimal places (the ledger counts whole micro-credits). */
export function hasAtMostSixDecimals(value: number): boolean {
  return Math.abs(value * 1e6 - Math.round(value * 1e6)) < 1e-3;
}
