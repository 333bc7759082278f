import type { JobState } from "../../../shared/contract/index.js";
import type { RpcRequest } from "../../sdk/src/index.js";

/**
 * The runs list's filter and page as the address holds them, so a filtered view is a link
 * to share and the back button goes to the view before (docs/decisions/0076). Times are
 * ISO-8601 UTC in the address, whatever the reader's time zone.
 */
export interface RunFilter {
  states: JobState[];
  pool: string;
  /** Jobs whose name starts with this. */
  name: string;
  /** `key=value` pairs, all to match. */
  metadata: string[];
  after: string;
  before: string;
  schedule: string;
  node: string;
  /** The page: `next_cursor` of the page before; empty for the newest. */
  cursor: string;
}

export const NO_FILTER: RunFilter = {
  states: [],
  pool: "",
  name: "",
  metadata: [],
  after: "",
  before: "",
  schedule: "",
  node: "",
  cursor: "",
};

const SINGLE = ["pool", "name", "after", "before", "schedule", "node", "cursor"] as const;

export function filterFromSearch(search: URLSearchParams): RunFilter {
  const filter: RunFilter = {
    ...NO_FILTER,
    states: search.getAll("state") as JobState[],
    metadata: search.getAll("metadata").filter((pair) => pair !== ""),
  };
  for (const name of SINGLE) filter[name] = search.get(name)?.trim() ?? "";
  return filter;
}

/** The address's query for a filter (`""` for none), in a fixed order so equal filters are equal links. */
export function searchOf(filter: RunFilter): string {
  const search = new URLSearchParams();
  for (const state of filter.states) search.append("state", state);
  for (const name of SINGLE.slice(0, -1)) if (filter[name] !== "") search.set(name, filter[name]);
  for (const pair of filter.metadata) search.append("metadata", pair);
  if (filter.cursor !== "") search.set("cursor", filter.cursor);
  const query = search.toString();
  return query === "" ? "" : `?${query}`;
}

/** The `jobs/list` filters of a filter, without its page (an export takes these). */
export function filtersOf(filter: RunFilter): Omit<RpcRequest<"listJobs">, "limit" | "cursor"> {
  const request: Omit<RpcRequest<"listJobs">, "limit" | "cursor"> = {};
  if (filter.states.length > 0) request.state = filter.states.length === 1 ? filter.states[0]! : filter.states;
  if (filter.pool !== "") request.pool_id = filter.pool;
  if (filter.name !== "") request.name_prefix = filter.name;
  if (filter.metadata.length > 0) request.metadata = filter.metadata;
  if (filter.after !== "") request.created_after = filter.after;
  if (filter.before !== "") request.created_before = filter.before;
  if (filter.schedule !== "") request.schedule_id = filter.schedule;
  if (filter.node !== "") request.node_id = filter.node;
  return request;
}

/** The `jobs/list` request of a filter and its page (the API checks it: a bad value is its 400, shown as such). */
export function listRequestOf(filter: RunFilter, limit: number): RpcRequest<"listJobs"> {
  return { limit, ...filtersOf(filter), ...(filter.cursor === "" ? {} : { cursor: filter.cursor }) };
}

/** Whether any filter is set (the page aside). */
export function isFiltered(filter: RunFilter): boolean {
  return searchOf({ ...filter, cursor: "" }) !== "";
}
