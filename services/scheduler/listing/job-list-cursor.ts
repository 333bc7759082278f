import { createHash } from "node:crypto";
import { isId, type ListJobsRequest } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";

/** The fields a cursor is bound to: the caller's listing and every filter (not `limit`, which may change between pages). */
type ListingOf = Omit<ListJobsRequest, "limit" | "cursor">;

function sorted<T>(value: T | T[] | undefined): T[] | undefined {
  return value === undefined ? undefined : (Array.isArray(value) ? [...value] : [value]).sort();
}

/**
 * A short digest of a listing: the tenancy and the filters, written the same way whatever
 * the order of repeated filters and however a time is spelled.
 */
function fingerprint(appId: string, businessId: string, body: ListingOf): string {
  const times = (text: string | undefined) => (text === undefined ? null : Date.parse(text));
  const listing = [
    appId,
    businessId,
    sorted(body.state) ?? null,
    body.pool_id ?? null,
    body.type ?? null,
    body.node_id ?? null,
    sorted(body.label) ?? null,
    sorted(body.metadata) ?? null,
    body.name_prefix ?? null,
    body.schedule_id ?? null,
    times(body.created_after),
    times(body.created_before),
  ];
  return createHash("sha256").update(JSON.stringify(listing)).digest("base64url").slice(0, 16);
}

/**
 * `next_cursor`: the last job id a page examined (ids sort by creation time, so it is a
 * stable position) bound to the listing it came from, so a cursor of another business or
 * of other filters is refused rather than answered with some other page.
 */
export function encodeListCursor(appId: string, businessId: string, body: ListingOf, lastJobId: string): string {
  return Buffer.from(`${lastJobId}.${fingerprint(appId, businessId, body)}`, "utf8").toString("base64url");
}

/** The position a `cursor` names; 400 `request.invalid` when it is no `next_cursor` of this same listing. */
export function decodeListCursor(appId: string, businessId: string, body: ListingOf, cursor: string): string {
  const [jobId, print, ...rest] = Buffer.from(cursor, "base64url").toString("utf8").split(".");
  if (rest.length > 0 || !isId("job", jobId) || print !== fingerprint(appId, businessId, body)) {
    throw new AppError(
      "request.invalid",
      "The cursor is not a next_cursor of a previous page of this listing (same filters, same business).",
      {
        details: { issues: [{ path: "cursor", message: "not a next_cursor of a previous page of this listing" }] },
      },
    );
  }
  return jobId;
}
