import { z } from "zod";

/** ISO-8601 UTC timestamp as written by the service (`2026-11-22T10:00:00.000Z`). */
export const Timestamp = z.iso.datetime();
export type Timestamp = z.infer<typeof Timestamp>;

/** Application id issued by the operator; sent as `X-App-ID`. */
export const AppId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "lowercase letters, digits, '-' or '_', at most 63 characters");
export type AppId = z.infer<typeof AppId>;

/** Service-generated record id: a type prefix, an underscore and 20 base62 characters. */
export const RecordId = z.string().regex(/^[a-z]{2,4}_[0-9A-Za-z]{20}$/, "a record id such as `biz_…`");

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
