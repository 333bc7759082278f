import type { Labels } from "../../../shared/contract/index.js";
import type { ConcurrencyGate } from "./concurrency-keys.js";

/** A queued job waiting for a node. `queued_at_ms` orders jobs FIFO (when it was last queued). */
export interface PendingJob {
  job_key: string;
  business_id: string;
  pool_key: string;
  type: string;
  labels: Labels;
  resources: { cpu: number; memory_mb: number; gpu: number };
  priority: number;
  queued_at_ms: number;
  /** Its concurrency key, when it has one. */
  concurrency?: ConcurrencyGate | null | undefined;
}
