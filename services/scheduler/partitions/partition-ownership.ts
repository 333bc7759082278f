import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import { type KV, KvWatchInclude } from "@nats-io/kv";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import { decodeJson, encodeJson } from "../../../shared/nats/index.js";
import { JOB_PARTITIONS } from "../../../shared/records/index.js";
import { Coalesced } from "../../../shared/runtime/index.js";
import { type Claim, heldBy, type OwnershipAction, planOwnership, unownedPartitions } from "./ownership-plan.js";

const MEMBER_PREFIX = "scheduler.members.";
const CLAIM_PREFIX = "scheduler.partitions.";
/** A member record unchanged this many leases is deleted: a replica that died long ago. */
const FORGET_AFTER_LEASES = 6;
/**
 * Every this many renewals, the known members' records are read again (by key, no
 * consumer), and every claim once a lease, a fifth of them at each renewal (a few reads
 * at a time, not a burst beside the job path): a change the watch missed, or a watch
 * silent for a minute because its consumer died with a NATS node, would otherwise leave
 * this replica's picture wrong (a live member seen as gone, a released partition as held).
 */
const REREAD_MEMBERS_EVERY_RENEWALS = 2;
const REREAD_CLAIMS_EVERY_RENEWALS = 5;

/** What a replica says of itself in its member record, renewed every renewal. */
export interface MemberReport {
  /** Jobs in this replica's queue: the others add them up for the queue's limit. */
  queued: number;
}

interface Observed {
  revision: number;
  /** When (monotonic ms) this revision was first seen: unchanged for a whole lease means the member is gone. */
  sinceMs: number;
  report: MemberReport;
}

function isWrongSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
      error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

function claimKey(partition: number): string {
  return `${CLAIM_PREFIX}${String(partition).padStart(2, "0")}`;
}

/**
 * Which job partitions this scheduler replica owns. Each replica renews a member record
 * (`scheduler.members.<instance>` in `cjs_leases`) every fifth of the lease, and each
 * partition has a claim record (`scheduler.partitions.<nn>`) naming its holder. From the
 * members it sees live and the claims, a replica claims the free partitions that belong
 * with it (rendezvous hashing, `ownership-plan.ts`), releases those that belong with a
 * member that joined, and takes over those of a member whose record stopped changing for a
 * whole lease; each by compare-and-set. It learns of changes by a watch, and reads the
 * members' records and the claims again every few renewals, so a watch that missed a
 * change or fell silent does not leave its picture wrong for long.
 *
 * Time is each replica's own monotonic clock, never a timestamp compared across machines:
 * a member is gone once its record has been seen unchanged for a whole lease, and a holder
 * stops working its partitions a fifth of a lease before that can happen when its own
 * renewals do not land. Correctness never rests on it: every placement and state change is
 * a compare-and-set, so two replicas that both work a partition for a moment only waste
 * writes.
 */
export class PartitionOwnership {
  readonly #members = new Map<string, Observed>();
  readonly #claims = new Map<number, Claim>();
  #owned: ReadonlySet<number> = new Set();
  #trustedUntil = 0;
  #timer: NodeJS.Timeout | undefined;
  #watcher: { stop(): void } | undefined;
  #stopped = false;
  /**
   * The latest revision seen of each partition's claim, a deletion's included: an older one
   * learnt late (a cluster's follower answering the start's read behind the watch) is
   * ignored. Without it a claim released meanwhile came back to life in this replica's
   * picture, held by a live replica that had let it go, and nobody claimed the partition.
   */
  readonly #claimSeen = new Map<number, number>();
  /** Renewals made so far: every few, the picture is read again (`#reread`). */
  #renewals = 0;
  /** One renewal and one pass over the claims at a time; asked meanwhile, one more runs after it. */
  readonly #ticks = new Coalesced(async () => {
    if (this.#stopped) return;
    await this.#renewAndClaim().catch((error: unknown) =>
      this.logger.warn({ err: error }, "partition ownership could not be renewed; trying again"),
    );
    this.#setOwned(this.#trusted(performance.now()) ? heldBy(this.instance, this.#claims) : new Set());
  });

  constructor(
    private readonly kv: KV,
    readonly instance: string,
    private readonly leaseMs: number,
    private readonly logger: Logger,
    /** Told the partitions this replica works, each time they change. */
    private readonly onChange: (owned: ReadonlySet<number>) => void,
    /** What this replica reports of itself at each renewal. */
    private readonly report: () => MemberReport,
  ) {}

  get renewMs(): number {
    return Math.max(50, Math.floor(this.leaseMs / 5));
  }

  /** The partitions this replica works now: those it holds while its own renewals land. */
  get owned(): ReadonlySet<number> {
    return this.#owned;
  }

  /** Replicas seen live now, this one included while it trusts its own renewals. */
  liveMembers(): Set<string> {
    const nowMs = performance.now();
    const live = new Set<string>();
    for (const [instance, observed] of this.#members) {
      if (instance === this.instance ? this.#trusted(nowMs) : nowMs - observed.sinceMs < this.leaseMs)
        live.add(instance);
    }
    if (this.#trusted(nowMs)) live.add(this.instance);
    return live;
  }

  /** The live replica that holds a partition, if any. */
  ownerOf(partition: number): string | undefined {
    const claim = this.#claims.get(partition);
    return claim && this.liveMembers().has(claim.instance) ? claim.instance : undefined;
  }

  /** Every live replica and the partitions it holds (this one included). */
  holders(): Map<string, number[]> {
    const live = this.liveMembers();
    const holders = new Map<string, number[]>();
    for (const [partition, claim] of this.#claims) {
      if (!live.has(claim.instance)) continue;
      holders.set(claim.instance, [...(holders.get(claim.instance) ?? []), partition]);
    }
    return holders;
  }

  /** Partitions no live replica holds (an alert when it lasts). */
  unowned(): number[] {
    return unownedPartitions(this.liveMembers(), this.#claims);
  }

  /** The queue sizes the other live replicas last reported. */
  othersQueued(): number {
    const live = this.liveMembers();
    let queued = 0;
    for (const [instance, observed] of this.#members)
      if (instance !== this.instance && live.has(instance)) queued += observed.report.queued;
    return queued;
  }

  async start(): Promise<void> {
    // Watch first (updates only), then read what is there: a change during the read is applied by revision.
    const watcher = await this.kv.watch({ key: "scheduler.>", include: KvWatchInclude.UpdatesOnly });
    this.#watcher = watcher;
    void (async () => {
      for await (const entry of watcher) {
        // A renewal of a member already known changes nothing to plan; a member joining or leaving, or a claim, does.
        if (this.#learn(entry.key, entry.revision, entry.operation === "PUT" ? entry.value : null)) void this.tick();
      }
    })();
    const keys: string[] = [];
    for await (const key of await this.kv.keys("scheduler.>")) keys.push(key);
    for (const key of keys) {
      const entry = await this.kv.get(key);
      if (entry) this.#learn(key, entry.revision, entry.operation === "PUT" ? entry.value : null);
    }
    await this.tick();
    this.#timer = setInterval(() => void this.tick(), this.renewMs);
  }

  /** Gives every held partition up at once (so the others take them within one renewal), then leaves. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#watcher?.stop();
    await this.#ticks.idle();
    this.#setOwned(new Set());
    await Promise.all(
      [...this.#claims]
        .filter(([, claim]) => claim.instance === this.instance)
        .map(([partition, claim]) =>
          this.kv.delete(claimKey(partition), { previousSeq: claim.revision }).catch(() => undefined),
        ),
    );
    await this.kv.delete(`${MEMBER_PREFIX}${this.instance}`).catch(() => undefined);
  }

  /** One renewal and one pass over the claims; never two at once (one more runs if asked meanwhile). */
  tick(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    return this.#ticks.run();
  }

  #trusted(nowMs: number): boolean {
    return nowMs < this.#trustedUntil;
  }

  async #renewAndClaim(): Promise<void> {
    const sentMs = performance.now();
    const record = { instance: this.instance, renewed_at: new Date().toISOString(), ...this.report() };
    const revision = await this.kv.put(`${MEMBER_PREFIX}${this.instance}`, encodeJson(record));
    this.#trustedUntil = sentMs + this.leaseMs - this.renewMs;
    this.#learn(`${MEMBER_PREFIX}${this.instance}`, revision, encodeJson(record));
    this.#renewals += 1;
    await this.#reread(this.#renewals).catch((error: unknown) =>
      this.logger.warn({ err: error }, "partition claims could not be read again; the watch's picture stands"),
    );
    const value = encodeJson({ instance: this.instance });
    // Each partition's compare-and-set is its own, so they go together: one after another, 31 claims on a busy
    // machine could outlast the trust in the renewal just made, and a starting replica would begin owning nothing.
    const actions = planOwnership(this.instance, this.liveMembers(), this.#claims);
    await Promise.all(actions.map((action) => this.#apply(action, value)));
    await this.#forgetLongGone();
  }

  /** One claim, take-over or release, by compare-and-set; losing the race changes nothing here (the winner's write comes through the watch). */
  async #apply(action: OwnershipAction, value: Uint8Array): Promise<void> {
    const key = claimKey(action.partition);
    try {
      if (action.kind === "claim") this.#learn(key, await this.kv.create(key, value), value);
      else if (action.kind === "take") {
        this.#learn(key, await this.kv.update(key, value, action.revision), value);
        this.logger.info({ partition: action.partition }, "took over a partition whose replica is gone");
      } else {
        // Stop working it before the claim goes, so the next holder never starts while this one still places.
        this.#setOwned(new Set([...this.#owned].filter((partition) => partition !== action.partition)));
        await this.kv.delete(key, { previousSeq: action.revision });
        this.#claims.delete(action.partition);
      }
    } catch (error) {
      // Another replica got there first: its write arrives through the watch.
      if (!isWrongSequence(error) && !(error instanceof JetStreamApiError)) throw error;
    }
  }

  /** Reads again, by key, the other members' records every few renewals and a fifth of the claims at each, taking in what the watch missed. */
  async #reread(renewal: number): Promise<void> {
    const keys: string[] = [];
    if (renewal % REREAD_MEMBERS_EVERY_RENEWALS === 0)
      for (const instance of this.#members.keys())
        if (instance !== this.instance) keys.push(`${MEMBER_PREFIX}${instance}`);
    for (let partition = 0; partition < JOB_PARTITIONS; partition += 1)
      if (partition % REREAD_CLAIMS_EVERY_RENEWALS === renewal % REREAD_CLAIMS_EVERY_RENEWALS)
        keys.push(claimKey(partition));
    const entries = await Promise.all(keys.map((key) => this.kv.get(key)));
    entries.forEach((entry, index) => {
      if (entry) this.#learn(keys[index] as string, entry.revision, entry.operation === "PUT" ? entry.value : null);
    });
  }

  /** Deletes member records nobody has renewed for many leases, so restarts do not pile them up. */
  async #forgetLongGone(): Promise<void> {
    const nowMs = performance.now();
    for (const [instance, observed] of this.#members) {
      if (instance === this.instance || nowMs - observed.sinceMs < FORGET_AFTER_LEASES * this.leaseMs) continue;
      await this.kv.delete(`${MEMBER_PREFIX}${instance}`, { previousSeq: observed.revision }).catch(() => undefined);
      this.#members.delete(instance);
    }
  }

  /** Takes in a record of the bucket; true when it changes what there is to plan (a member came or went, a claim changed). */
  #learn(key: string, revision: number, value: Uint8Array | null): boolean {
    if (key.startsWith(MEMBER_PREFIX)) {
      const instance = key.slice(MEMBER_PREFIX.length);
      const known = this.#members.get(instance);
      if (known && known.revision >= revision) return false;
      if (value === null) {
        this.#members.delete(instance);
        return known !== undefined;
      }
      this.#members.set(instance, {
        revision,
        sinceMs: performance.now(),
        report: { queued: Number((decodeJson(value) as Partial<MemberReport>).queued ?? 0) || 0 },
      });
      return known === undefined && instance !== this.instance;
    }
    if (key.startsWith(CLAIM_PREFIX)) {
      const partition = Number(key.slice(CLAIM_PREFIX.length));
      if (!Number.isInteger(partition) || partition < 0 || partition >= JOB_PARTITIONS) return false;
      if (revision <= (this.#claimSeen.get(partition) ?? 0)) return false;
      this.#claimSeen.set(partition, revision);
      const instance = value === null ? undefined : (decodeJson(value) as { instance?: unknown }).instance;
      if (typeof instance === "string") this.#claims.set(partition, { instance, revision });
      else this.#claims.delete(partition);
      return true;
    }
    return false;
  }

  #setOwned(owned: Set<number>): void {
    if (owned.size === this.#owned.size && [...owned].every((partition) => this.#owned.has(partition))) return;
    const before = this.#owned;
    this.#owned = owned;
    const gained = [...owned].filter((partition) => !before.has(partition));
    const lost = [...before].filter((partition) => !owned.has(partition));
    this.logger.info(
      { instance: this.instance, partitions: owned.size, gained, lost },
      "this replica's job partitions changed",
    );
    this.onChange(owned);
  }
}
