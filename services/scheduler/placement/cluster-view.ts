import { KvWatchInclude, type KvWatchEntry } from "@nats-io/kv";
import type { Logger } from "pino";
import type { z } from "zod";
import { decodeJson, type JsonBucket } from "../../../shared/nats/index.js";
import {
  allocationUse,
  type AllocationRecord,
  type NodeRecord,
  placementPoolKey,
  windowCount,
} from "../../../shared/records/index.js";
import { allocationOf } from "./allocation-fields.js";
import { nodeCaps } from "./node-caps.js";
import type { NodeView } from "./plan.js";
import type { SchedulerStore } from "../scheduler-store.js";
import { lastStoredRevision } from "../partitions/missed-revisions.js";
import { jobRepairs } from "../scheduler-metrics.js";
import { WatchSilence } from "./watch-silence.js";

interface Versioned<T> {
  value: T;
  revision: number;
}

/** One bucket the view follows: its watch, and what tells whether the watch went silent. */
interface Followed {
  name: string;
  kv: JsonBucket<z.ZodType>["kv"];
  watcher: { stop(): void };
  silence: WatchSilence;
  /** Starts a watch from `revision` on, consumed into the view. */
  watchFrom(revision: number | undefined): Promise<{ stop(): void }>;
}

/** What placement reads of a node, as one comparable string. */
function placementFace(node: NodeRecord): string {
  const { pool_key, labels, capacity, job_types, draining, offline_at, quotas } = node;
  return JSON.stringify([pool_key, labels, capacity, job_types, draining, offline_at === null, quotas ?? null]);
}

/** A new reservation takes room; only freed room can let a waiting job in. */
function freesRoom(before: AllocationRecord | null, after: AllocationRecord | null): boolean {
  const remaining = Object.keys(after?.attempts ?? {});
  return Object.keys(before?.attempts ?? {}).some((jobId) => !remaining.includes(jobId));
}

/** The view's node records, with their ids by placement pool key, built when first asked after a change. */
class NodesByPool extends Map<string, Versioned<NodeRecord>> {
  #byPool: Map<string, string[]> | null = null;

  constructor(private readonly sharedPools: readonly string[]) {
    super();
  }

  override set(nodeId: string, node: Versioned<NodeRecord>): this {
    // A heartbeat rewrites the record every interval; only a new node or a moved one changes the index.
    const before = this.get(nodeId)?.value;
    if (!before || placementPoolKey(before, this.sharedPools) !== placementPoolKey(node.value, this.sharedPools))
      this.#byPool = null;
    return super.set(nodeId, node);
  }

  override delete(nodeId: string): boolean {
    this.#byPool = null;
    return super.delete(nodeId);
  }

  override clear(): void {
    this.#byPool = null;
    super.clear();
  }

  inPool(poolKey: string): readonly string[] {
    if (!this.#byPool) {
      this.#byPool = new Map();
      for (const { value: node } of this.values()) {
        const key = placementPoolKey(node, this.sharedPools);
        const ids = this.#byPool.get(key);
        if (ids) ids.push(node.node_id);
        else this.#byPool.set(key, [node.node_id]);
      }
    }
    return this.#byPool.get(poolKey) ?? [];
  }
}

/**
 * A replica's live picture of the nodes and their reservations, rebuilt from the KV
 * buckets at start and kept current by watching them. Placement reads it; every write
 * still goes through compare-and-set, so a stale picture costs a retry, never a double booking.
 */
export class ClusterView {
  readonly nodes: NodesByPool;
  readonly allocations = new Map<string, Versioned<AllocationRecord>>();
  private readonly followed: Followed[] = [];

  constructor(
    private readonly store: SchedulerStore,
    /** Called after any node or reservation changed. */
    private readonly onChange: () => void,
    /** The operator pools shared across applications: a node's pool is read through `placementPoolKey`. */
    private readonly sharedPools: readonly string[] = [],
    private readonly logger?: Logger,
  ) {
    this.nodes = new NodesByPool(sharedPools);
  }

  async start(): Promise<void> {
    // A heartbeat rewrites a node record every interval; only what placement reads should wake it.
    await this.follow(
      this.store.nodes,
      this.nodes,
      (before, after) => before === null || after === null || placementFace(before) !== placementFace(after),
    );
    await this.follow(this.store.allocations, this.allocations, freesRoom, allocationOf);
  }

  stop(): void {
    for (const { watcher } of this.followed) watcher.stop();
  }

  /**
   * The repair sweep's check of the view's watches: one that brought nothing between two
   * checks while its bucket changed is made again from the revision after the last it
   * brought, so the view catches up in two sweeps rather than the minute nats.js takes to
   * notice a consumer lost with its NATS node (decision 0086).
   */
  async recoverSilent(): Promise<void> {
    for (const followed of this.followed) {
      if (!followed.silence.check(await lastStoredRevision(followed.kv))) continue;
      const from = followed.silence.seen + 1;
      this.logger?.warn(
        { bucket: followed.name, from_revision: from },
        "the cluster view's watch brought nothing while its bucket changed; it is made again",
      );
      jobRepairs.inc({ kind: "view_watch_remade" });
      const old = followed.watcher;
      followed.watcher = await followed.watchFrom(from);
      followed.silence.restarted();
      old.stop();
    }
  }

  /**
   * An allocation this replica just wrote or read: known at once, before the watch brings
   * it back (the watch then skips it, so freed room is announced here).
   */
  learn(nodeId: string, allocation: AllocationRecord, revision: number): void {
    const known = this.allocations.get(nodeId);
    if (known && known.revision >= revision) return;
    this.allocations.set(nodeId, { value: allocation, revision });
    if (freesRoom(known?.value ?? null, allocation)) this.onChange();
  }

  /** Attempts whose release is on its way to the node's record (`releaseSoon`), by node: placement counts their room free. */
  readonly #freeing = new Map<string, Map<string, number>>();

  /** An attempt's release is on its way: its room counts as free from now on. */
  freeing(nodeId: string, jobId: string, attempt: number): void {
    const attempts = this.#freeing.get(nodeId) ?? new Map<string, number>();
    attempts.set(jobId, attempt);
    this.#freeing.set(nodeId, attempts);
    this.onChange();
  }

  /** That release was written (or failed): the record says again what is reserved. */
  freed(nodeId: string, jobId: string, attempt: number): void {
    const attempts = this.#freeing.get(nodeId);
    if (attempts?.get(jobId) !== attempt) return;
    attempts.delete(jobId);
    if (attempts.size === 0) this.#freeing.delete(nodeId);
  }

  /** Nodes as placement sees them at `nowMs`, with what they have reserved and their key's caps applied. */
  nodeViews(nowMs: number): NodeView[] {
    return [...this.nodes.values()].map(({ value: node }) => this.#viewOf(node, nowMs));
  }

  /** The nodes of one pool (its placement pool key) as placement sees them at `nowMs`. */
  nodeViewsIn(poolKey: string, nowMs: number): NodeView[] {
    const views: NodeView[] = [];
    for (const nodeId of this.nodes.inPool(poolKey)) {
      const node = this.nodes.get(nodeId)?.value;
      if (node) views.push(this.#viewOf(node, nowMs));
    }
    return views;
  }

  /**
   * One node as placement sees it at `nowMs`, as if the attempt `freeing` (its result just
   * recorded) no longer held room: the slot a node's result frees, before the release is written.
   */
  nodeView(nodeId: string, nowMs: number, freeing?: { jobId: string; attempt: number }): NodeView | undefined {
    const node = this.nodes.get(nodeId)?.value;
    return node && this.#viewOf(node, nowMs, freeing);
  }

  #viewOf(node: NodeRecord, nowMs: number, freeing?: { jobId: string; attempt: number }): NodeView {
    const allocation = this.allocations.get(node.node_id)?.value ?? null;
    const pending = this.#freeing.get(node.node_id);
    // An attempt being freed holds no room: `freeing` first, then the releases on their way.
    const released =
      pending || freeing
        ? (jobId: string, attempt: number) =>
            (freeing?.jobId === jobId ? freeing.attempt : pending?.get(jobId)) === attempt
        : undefined;
    const caps = nodeCaps(node);
    return {
      node_id: node.node_id,
      pool_key: placementPoolKey(node, this.sharedPools),
      labels: node.labels,
      job_types: caps.jobTypes,
      capacity: { ...node.capacity, slots: caps.slots },
      used: allocationUse(allocation, released),
      draining: node.draining,
      online: node.offline_at === null,
      per_hour:
        caps.perHour === null
          ? undefined
          : { limit: caps.perHour, used: windowCount(allocation?.assigned_last_hour ?? [], nowMs) },
    };
  }

  /** Watch first (updates only), then read everything: an update during the read is applied by revision, never lost. */
  private async follow<T>(
    bucket: JsonBucket<z.ZodType<T>>,
    into: Map<string, Versioned<T>>,
    matters: (before: T | null, after: T | null) => boolean,
    /** A cheaper check than the schema for the records of a busy bucket; the schema decides the rest. */
    quickCheck?: (value: unknown) => T | undefined,
  ): Promise<void> {
    const { kv, schema } = bucket;
    const decode = (data: Uint8Array): T => {
      const value = decodeJson(data);
      return quickCheck?.(value) ?? schema.parse(value);
    };
    const apply = (key: string, revision: number, value: T | null) => {
      const known = into.get(key);
      if (known && known.revision >= revision) return;
      if (value === null) into.delete(key);
      else into.set(key, { value, revision });
      if (matters(known?.value ?? null, value)) this.onChange();
    };
    const silence = new WatchSilence(0);
    const watchFrom = async (revision: number | undefined) => {
      const watcher = await kv.watch({
        include: KvWatchInclude.UpdatesOnly,
        ...(revision === undefined ? {} : { resumeFromRevision: revision }),
      });
      void (async () => {
        for await (const entry of watcher as AsyncIterable<KvWatchEntry>) {
          silence.heard(entry.revision);
          // A revision already held (this replica's own write, learned when it landed) is not decoded again.
          if ((into.get(entry.key)?.revision ?? 0) >= entry.revision) continue;
          apply(entry.key, entry.revision, entry.operation === "PUT" ? decode(entry.value) : null);
        }
      })();
      return watcher;
    };
    const watcher = await watchFrom(undefined);
    // What the bucket held when the watch started is read below: the watch is answerable from there on.
    silence.heard(await lastStoredRevision(kv));
    this.followed.push({ name: bucket.bucketName, kv, watcher, silence, watchFrom });
    for (const key of await bucket.keys()) {
      const entry = await kv.get(key);
      if (entry && entry.operation === "PUT") apply(key, entry.revision, decode(entry.value));
    }
  }
}
