import type { JobSummary, LedgerEntry } from "../../../shared/contract/index.js";
import type { CsvCell } from "./csv.js";

/** One CSV column: its header and how a record fills it. NDJSON writes records whole. */
export interface Column<T> {
  header: string;
  value: (record: T) => CsvCell;
}

const json = (value: unknown): string => JSON.stringify(value);

/** A job as `jobs/list` gives it; maps and lists are JSON text in one cell. */
export const JOB_COLUMNS: readonly Column<JobSummary>[] = [
  { header: "job_id", value: (job) => job.job_id },
  { header: "name", value: (job) => job.name },
  { header: "type", value: (job) => job.type },
  { header: "state", value: (job) => job.state },
  { header: "pool_id", value: (job) => job.pool_id },
  { header: "priority", value: (job) => job.priority },
  { header: "attempt", value: (job) => job.attempt },
  { header: "max_attempts", value: (job) => job.max_attempts },
  { header: "node_id", value: (job) => job.node_id },
  { header: "exit_code", value: (job) => job.exit_code },
  { header: "error_code", value: (job) => job.error?.code ?? null },
  { header: "error_message", value: (job) => job.error?.message ?? null },
  { header: "pending_reason", value: (job) => job.pending_reason },
  { header: "cpu", value: (job) => job.resources.cpu },
  { header: "memory_mb", value: (job) => job.resources.memory_mb },
  { header: "gpu", value: (job) => job.resources.gpu },
  { header: "timeout_seconds", value: (job) => job.timeout_seconds },
  { header: "wall_seconds", value: (job) => job.usage?.wall_seconds ?? null },
  { header: "cpu_seconds", value: (job) => job.usage?.cpu_seconds ?? null },
  { header: "peak_memory_mb", value: (job) => job.usage?.peak_memory_mb ?? null },
  { header: "command", value: (job) => json(job.command) },
  { header: "labels", value: (job) => json(job.labels) },
  { header: "metadata", value: (job) => json(job.metadata) },
  { header: "user_id", value: (job) => job.user_id },
  { header: "key_id", value: (job) => job.key_id },
  { header: "created_at", value: (job) => job.created_at },
  { header: "queued_at", value: (job) => job.queued_at },
  { header: "started_at", value: (job) => job.started_at },
  { header: "finished_at", value: (job) => job.finished_at },
  { header: "updated_at", value: (job) => job.updated_at },
];

/** A ledger entry as `billing/ledger/list` gives it; a debit's usage in its own columns. */
export const LEDGER_COLUMNS: readonly Column<LedgerEntry>[] = [
  { header: "entry_id", value: (entry) => entry.entry_id },
  { header: "kind", value: (entry) => entry.kind },
  { header: "amount", value: (entry) => entry.amount },
  { header: "balance_after", value: (entry) => entry.balance_after },
  { header: "job_id", value: (entry) => entry.job_id },
  { header: "attempt", value: (entry) => entry.attempt },
  { header: "plan_id", value: (entry) => entry.usage?.plan_id ?? null },
  { header: "wall_seconds", value: (entry) => entry.usage?.wall_seconds ?? null },
  { header: "cpu", value: (entry) => entry.usage?.cpu ?? null },
  { header: "memory_mb", value: (entry) => entry.usage?.memory_mb ?? null },
  { header: "gpu", value: (entry) => entry.usage?.gpu ?? null },
  { header: "created_at", value: (entry) => entry.created_at },
];
