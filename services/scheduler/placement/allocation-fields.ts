import type { AllocationRecord } from "../../../shared/records/index.js";
import { type Fields, isNumber, isString, resourcesOf } from "../partitions/record-fields.js";

function isAttempt(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const { job_key, attempt, resources, assigned_at } = value as Fields;
  return isString(job_key) && isNumber(attempt) && resourcesOf(resources) !== undefined && isString(assigned_at);
}

function isHourWindow(value: unknown): boolean {
  return (
    value === undefined ||
    (Array.isArray(value) &&
      value.every((pair) => Array.isArray(pair) && pair.length === 2 && isNumber(pair[0]) && isNumber(pair[1])))
  );
}

/**
 * A node's allocation record as the watch decoded it, when it has every field placement
 * reads; undefined otherwise (the caller then checks it with the schema, for the message).
 * Every replica decodes every revision of every node's allocation (about one per job), so
 * this is plain `typeof` tests rather than the zod schema.
 */
export function allocationOf(value: unknown): AllocationRecord | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { node_id, attempts, assigned_last_hour } = value as Fields;
  if (!isString(node_id) || typeof attempts !== "object" || attempts === null || Array.isArray(attempts))
    return undefined;
  for (const attempt of Object.values(attempts)) if (!isAttempt(attempt)) return undefined;
  return isHourWindow(assigned_last_hour) ? (value as AllocationRecord) : undefined;
}
