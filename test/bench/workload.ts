import type { RpcRequest } from "../../shared/contract/index.js";
import { WORKER_CONCURRENCY } from "./bullmq/bull-side.js";

/** Our fake agents per fleet, and slots each: 100 in all, as the BullMQ Worker's concurrency. */
export const NODES = 4;
export const SLOTS = 25;
/** Clients submitting at once in a burst or a closed-loop window, on either side. */
export const SUBMITTERS = 32;

/** The job both sides carry: our submit's body is also the BullMQ job's data, so both move the same bytes. */
export const JOB = { type: "shell", command: ["true"], resources: { cpu: 0.5, memory_mb: 64, gpu: 0 } } as const;

export function ourJob(pool_id: string, index: number): RpcRequest<"submitJob"> {
  return { ...JOB, command: [...JOB.command], pool_id, name: `bench-${index}` };
}

/** What both sides are, for a table's notes; `nodes` says how our fake agents talk, or that there are none. */
export function sideNotes(redisDriver: string, nodes: "NATS-direct" | "NATS-direct or HTTP" | "none"): string[] {
  const agents =
    nodes === "none"
      ? "no node: the scheduler holds every job"
      : `${NODES} fake agents × ${SLOTS} slots (${nodes}) on a self-hosted pool (no credit check), polling as the agent does`;
  const worker =
    nodes === "none" ? "no Worker" : `one Worker process with concurrency ${WORKER_CONCURRENCY} and a no-op processor`;
  return [
    `ours: nats-server and the six services (webhooks with no webhook), one process each, services at their defaults; ${agents}; clients submit over HTTP (node:http, kept-alive, as the agent sends) with a user API key`,
    `BullMQ: redis-server (no persistence), ${worker}; the bench's Queue adds one job per call, ${SUBMITTERS} calls in flight (concurrent add, as our clients submit one job per request; not addBulk); Redis client: ${redisDriver}`,
  ];
}
