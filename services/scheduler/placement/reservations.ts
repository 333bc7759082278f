import type { NatsConnection } from "@nats-io/transport-node";
import { encodeJson, subjects } from "../../../shared/nats/index.js";
import {
  addToWindow,
  allocationUse,
  type AllocatedAttempt,
  type AllocationRecord,
  type NodeRecord,
  removeFromWindow,
  windowCount,
} from "../../../shared/records/index.js";
import { nodeCaps } from "./node-caps.js";
import { hasRoomFor } from "./plan.js";
import type { ClusterView } from "./cluster-view.js";
import type { SchedulerStore } from "../scheduler-store.js";

function fits(
  node: NodeRecord,
  allocation: AllocationRecord,
  attempt: AllocatedAttempt,
  jobType: string,
  nowMs: number,
): boolean {
  const caps = nodeCaps(node);
  return (
    caps.jobTypes.includes(jobType) &&
    (caps.perHour === null || windowCount(allocation.assigned_last_hour ?? [], nowMs) < caps.perHour) &&
    hasRoomFor({ ...node.capacity, slots: caps.slots }, allocationUse(allocation), attempt.resources)
  );
}

/**
 * How long the release of a finished attempt waits for the node's next reservation to
 * share its write. Placement sees the slot free meanwhile (`ClusterView.freeing`), so it
 * delays no job; a replica that dies in between leaves the reservation to the reconciler.
 */
const SOON_MS = 25;

/** A change of a node's allocation record asked for by one caller: the record it would write, or undefined for none. */
type AllocationChange = (current: AllocationRecord | null) => AllocationRecord | undefined;

interface WaitingChange {
  apply: AllocationChange;
  /** Whether the view's copy of the record can be the starting point (else the record is read first). */
  trustsCopy: (copy: AllocationRecord) => boolean;
  resolve: (applied: boolean) => void;
  reject: (error: unknown) => void;
}

/**
 * The one writer of each node's allocation record in this replica. Changes asked for
 * while a write to the same record is in flight wait for it and then go together in one
 * compare-and-set, applied in the order they were asked; each caller learns whether its
 * own change applied. Placements and the releases of finished jobs no longer race each
 * other for the record inside one process (a refused write and a read each time), and a
 * round that places several jobs on one node writes its record once. The write starts
 * from the view's copy, which every write here keeps current; another replica's write
 * costs a refused compare-and-set and a read.
 */
export class AllocationWriter {
  readonly #waiting = new Map<string, WaitingChange[]>();
  readonly #writing = new Set<string>();
  /** Changes that wait a moment for the node's next change, to go in its write. */
  readonly #soon = new Map<string, { changes: WaitingChange[]; timer: NodeJS.Timeout }>();
  /** Each node's writes under way (`writeAll`). */
  readonly #flights = new Set<Promise<void>>();

  constructor(
    private readonly store: Pick<SchedulerStore, "allocations">,
    private readonly view: Pick<ClusterView, "allocations" | "learn">,
    /** How long a change asked for `soon` waits for company. */
    private readonly soonMs = SOON_MS,
  ) {}

  /** Applies `apply` to the node's record in the next write; true when it changed the record and the write landed. */
  change(
    nodeId: string,
    apply: AllocationChange,
    trustsCopy: (copy: AllocationRecord) => boolean = () => true,
  ): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => this.#enqueue(nodeId, [{ apply, trustsCopy, resolve, reject }]));
  }

  /**
   * As `change`, but the write may wait up to `soonMs` for the node's next change and go
   * with it (at a steady rate a node's freed slot is mostly taken again within moments):
   * one write instead of two. Settles when written.
   */
  changeSoon(
    nodeId: string,
    apply: AllocationChange,
    trustsCopy: (copy: AllocationRecord) => boolean = () => true,
  ): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      const change = { apply, trustsCopy, resolve, reject };
      const soon = this.#soon.get(nodeId);
      if (soon) soon.changes.push(change);
      else
        this.#soon.set(nodeId, {
          changes: [change],
          timer: setTimeout(() => this.#enqueue(nodeId, []), this.soonMs),
        });
    });
  }

  /** Writes every change waiting for company now, and waits for the writes (the replica is stopping). */
  async flushSoon(): Promise<void> {
    for (const nodeId of [...this.#soon.keys()]) this.#enqueue(nodeId, []);
    await Promise.all(this.#flights);
  }

  /** Queues `changes` for the node's next write, after any that waited for company. */
  #enqueue(nodeId: string, changes: WaitingChange[]): void {
    const soon = this.#soon.get(nodeId);
    if (soon) {
      clearTimeout(soon.timer);
      this.#soon.delete(nodeId);
    }
    const batch = [...(soon?.changes ?? []), ...changes];
    if (batch.length === 0) return;
    const waiting = this.#waiting.get(nodeId);
    if (waiting) waiting.push(...batch);
    else this.#waiting.set(nodeId, batch);
    if (!this.#writing.has(nodeId)) {
      const flight = this.writeAll(nodeId);
      this.#flights.add(flight);
      const landed = () => void this.#flights.delete(flight);
      void flight.then(landed, landed);
    }
  }

  private async writeAll(nodeId: string): Promise<void> {
    this.#writing.add(nodeId);
    try {
      for (let batch = this.take(nodeId); batch.length > 0; batch = this.take(nodeId)) await this.write(nodeId, batch);
    } finally {
      this.#writing.delete(nodeId);
    }
  }

  private take(nodeId: string): WaitingChange[] {
    const batch = this.#waiting.get(nodeId) ?? [];
    this.#waiting.delete(nodeId);
    return batch;
  }

  private async write(nodeId: string, batch: readonly WaitingChange[]): Promise<void> {
    const copy = this.view.allocations.get(nodeId);
    const start = copy && batch.every((change) => change.trustsCopy(copy.value)) ? copy : undefined;
    let applied: boolean[] = [];
    try {
      const stored = await this.store.allocations.upsert(
        nodeId,
        (current) => {
          applied = batch.map(() => false);
          let state = current;
          batch.forEach((change, index) => {
            const next = change.apply(state);
            if (next === undefined) return;
            state = next;
            applied[index] = true;
          });
          return applied.includes(true) ? (state ?? undefined) : undefined;
        },
        start,
      );
      // Written, or read afresh and found without room: either way the view learns it, so the next plan sees it.
      if (stored) this.view.learn(nodeId, stored.value, stored.revision);
      batch.forEach((change, index) => change.resolve(stored?.written === true && applied[index] === true));
    } catch (error) {
      for (const change of batch) change.reject(error);
    }
  }
}

/**
 * Reserves a node's capacity for a job's attempt by compare-and-set on the node's
 * allocation record: of two replicas racing for the last slot, one wins. The same write
 * checks the caps of the node's key (its job types, concurrent attempts, and assignments
 * in the last hour, which a capped node's record counts), so no replica can pass them either.
 * False when the node has no room (any more), or when this attempt (or a later one) of
 * the job already holds a reservation here: two replicas holding copies of one queued job
 * compute the same attempt number, and the one that reserved it first owns the entry; the
 * other must neither overwrite it nor, after losing the assignment, release it.
 */
export function reserve(
  { allocations }: { allocations: AllocationWriter },
  node: NodeRecord,
  jobId: string,
  attempt: AllocatedAttempt,
  jobType: string,
  nowMs: number,
): Promise<boolean> {
  return allocations.change(node.node_id, reservation(node, jobId, attempt, jobType, nowMs));
}

/** `reserve`'s change of the record: undefined when the node has no room or the entry is taken. */
function reservation(
  node: NodeRecord,
  jobId: string,
  attempt: AllocatedAttempt,
  jobType: string,
  nowMs: number,
): AllocationChange {
  const countsHour = nodeCaps(node).perHour !== null;
  return (current) => {
    const allocation: AllocationRecord = current ?? { node_id: node.node_id, attempts: {} };
    if ((allocation.attempts[jobId]?.attempt ?? -1) >= attempt.attempt) return undefined;
    if (!fits(node, allocation, attempt, jobType, nowMs)) return undefined;
    const next: AllocationRecord = { ...allocation, attempts: { ...allocation.attempts, [jobId]: attempt } };
    if (countsHour) next.assigned_last_hour = addToWindow(allocation.assigned_last_hour ?? [], nowMs);
    return next;
  };
}

/**
 * Frees what an attempt reserved; a reservation of another attempt of the job is left
 * alone. `unassigned`: the job was never assigned, so the reservation does not count
 * against the node's hourly cap either. A view's copy without the attempt may only lag
 * behind another replica's reserve, so then the record is read first.
 */
export async function release(
  { allocations }: { allocations: AllocationWriter },
  nodeId: string,
  jobId: string,
  attempt: number,
  { unassigned = false } = {},
): Promise<void> {
  await allocations.change(nodeId, releasing(jobId, attempt, unassigned), (copy) => holds(copy, jobId, attempt));
}

/**
 * Frees a finished attempt's reservation in the node's next write, or on its own a moment
 * later (`changeSoon`): the write a node's next reservation makes anyway carries it. The
 * replica's placement counts the slot free at once. Nothing waits for it; a failed write
 * leaves the reservation to the reconciler, which frees one whose job moved on.
 */
export function releaseSoon(
  ctx: { allocations: AllocationWriter; view: Pick<ClusterView, "freeing" | "freed"> },
  nodeId: string,
  jobId: string,
  attempt: number,
): void {
  ctx.view.freeing(nodeId, jobId, attempt);
  void ctx.allocations
    .changeSoon(nodeId, releasing(jobId, attempt, false), (copy) => holds(copy, jobId, attempt))
    .catch(() => undefined)
    .finally(() => ctx.view.freed(nodeId, jobId, attempt));
}

/** `release`'s change of the record: undefined when the attempt holds nothing there. */
function releasing(jobId: string, attempt: number, unassigned: boolean): AllocationChange {
  return (allocation) => {
    const reserved = allocation?.attempts[jobId];
    if (!allocation || reserved?.attempt !== attempt) return undefined;
    const { [jobId]: _freed, ...rest } = allocation.attempts;
    const next: AllocationRecord = { ...allocation, attempts: rest };
    if (unassigned && allocation.assigned_last_hour)
      next.assigned_last_hour = removeFromWindow(allocation.assigned_last_hour, Date.parse(reserved.assigned_at));
    return next;
  };
}

/** Whether a copy of the record holds the attempt (a copy without it may only lag behind another replica's reserve). */
function holds(copy: AllocationRecord, jobId: string, attempt: number): boolean {
  return copy.attempts[jobId]?.attempt === attempt;
}

/**
 * Frees one attempt and reserves another in the same write: a node's result and the next
 * job for the slot it frees (`take-next.ts`). The release always applies; true when the
 * reservation did too (the node had room after the release).
 */
export async function swapReservation(
  { allocations }: { allocations: AllocationWriter },
  node: NodeRecord,
  freed: { jobId: string; attempt: number },
  next: { jobId: string; attempt: AllocatedAttempt; jobType: string },
  nowMs: number,
): Promise<boolean> {
  const release = releasing(freed.jobId, freed.attempt, false);
  const reserveNext = reservation(node, next.jobId, next.attempt, next.jobType, nowMs);
  let reserved = false;
  const written = await allocations.change(
    node.node_id,
    (current) => {
      const released = release(current) ?? current;
      const taken = reserveNext(released);
      reserved = taken !== undefined;
      return taken ?? (released === current ? undefined : (released ?? undefined));
    },
    (copy) => holds(copy, freed.jobId, freed.attempt),
  );
  return written && reserved;
}

/**
 * Frees an attempt that the service ended while the node may still run it (cancel,
 * timeout, lost node), and tells the node's long poll, so the agent hears at once rather
 * than at its next heartbeat.
 */
export async function releaseEndedAttempt(
  ctx: { allocations: AllocationWriter; nc: NatsConnection },
  nodeId: string,
  jobId: string,
  attempt: number,
): Promise<void> {
  await release(ctx, nodeId, jobId, attempt);
  ctx.nc.publish(subjects.nodeReleased(nodeId), encodeJson({ node_id: nodeId, job_id: jobId, attempt }));
}

/**
 * Writes back the reservation of an attempt that is running on the node without one (a
 * lost write). Unlike `reserve` it does not check room: the attempt is using it already.
 * The record is read first: the view's copy is what said the reservation was missing.
 */
export async function reinstate(
  { allocations }: { allocations: AllocationWriter },
  nodeId: string,
  jobId: string,
  attempt: AllocatedAttempt,
): Promise<void> {
  await allocations.change(
    nodeId,
    (current) => {
      const allocation: AllocationRecord = current ?? { node_id: nodeId, attempts: {} };
      if ((allocation.attempts[jobId]?.attempt ?? -1) >= attempt.attempt) return undefined;
      return { ...allocation, attempts: { ...allocation.attempts, [jobId]: attempt } };
    },
    () => false,
  );
}
