import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import { encodeJson } from "../../../shared/nats/index.js";

/** The lease's key in the `cjs_leases` bucket. */
const LEASE_KEY = "placement";

function isWrongSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
      error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/**
 * Which scheduler replica places jobs: the holder of a lease record, renewed by
 * compare-and-set every fifth of the lease. Only one replica places at a time, so
 * priority and the businesses' turns hold across the whole queue and replicas do not race
 * each other for the same nodes. Correctness never rests on it: every placement is a
 * compare-and-set on the node's allocation and on the job, so two replicas that both
 * believe they lead (for a moment, across a partition) can only waste a write.
 *
 * Time is each replica's own monotonic clock, never a timestamp compared across machines:
 * another replica takes the lease over only once it has seen the record unchanged for a
 * whole lease, and the holder stops placing a fifth of a lease before that can happen.
 */
export class PlacementLease {
  #holding = false;
  /** The lease's revision this replica wrote last, while it holds it. */
  #revision = 0;
  /** Until when (monotonic ms) the holder trusts its lease: one lease after the renewal was sent, less one renewal interval. */
  #trustedUntil = 0;
  /** The revision of another's lease as first seen, and when: unchanged for a whole lease means its holder is gone. */
  #observed: { revision: number; sinceMs: number } | null = null;
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | undefined;

  constructor(
    private readonly kv: KV,
    private readonly instance: string,
    private readonly leaseMs: number,
    private readonly logger: Logger,
    /** Told when this replica starts or stops placing. */
    private readonly onChange: (leading: boolean) => void,
  ) {}

  get renewMs(): number {
    return Math.max(50, Math.floor(this.leaseMs / 5));
  }

  /** Whether this replica places now. */
  get leading(): boolean {
    return this.#holding && performance.now() < this.#trustedUntil;
  }

  start(): void {
    this.#timer = setInterval(() => void this.tick(), this.renewMs);
    void this.tick();
  }

  /** Stops renewing; a holder gives the lease up at once, so another replica places within one renewal. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#ticking;
    if (!this.#holding) return;
    this.setHolding(false);
    await this.kv.delete(LEASE_KEY, { previousSeq: this.#revision }).catch(() => undefined);
  }

  /** One renewal, or one look at another's lease. Never two at once. */
  tick(): Promise<void> {
    this.#ticking ??= this.renewOrWatch()
      .catch((error: unknown) =>
        this.logger.debug({ err: error }, "the placement lease could not be read or written; trying again"),
      )
      .finally(() => {
        this.#ticking = undefined;
        // A holder that could not renew for too long has lost it, whether or not anyone took it.
        if (this.#holding && !this.leading) this.setHolding(false);
      });
    return this.#ticking;
  }

  private async renewOrWatch(): Promise<void> {
    const sentMs = performance.now();
    const value = encodeJson({ instance: this.instance, renewed_at: new Date().toISOString() });
    if (this.#holding) {
      try {
        this.#revision = await this.kv.update(LEASE_KEY, value, this.#revision);
        this.#trustedUntil = sentMs + this.leaseMs - this.renewMs;
      } catch (error) {
        if (!isWrongSequence(error)) throw error;
        this.setHolding(false);
      }
      return;
    }
    const current = await this.kv.get(LEASE_KEY);
    const free = !current || current.operation !== "PUT";
    if (!free) {
      if (this.#observed?.revision !== current.revision) {
        this.#observed = { revision: current.revision, sinceMs: sentMs };
        return;
      }
      if (sentMs - this.#observed.sinceMs < this.leaseMs) return;
    }
    try {
      this.#revision = current
        ? await this.kv.update(LEASE_KEY, value, current.revision)
        : await this.kv.create(LEASE_KEY, value);
    } catch (error) {
      if (isWrongSequence(error)) return;
      throw error;
    }
    this.#trustedUntil = sentMs + this.leaseMs - this.renewMs;
    this.#observed = null;
    this.setHolding(true);
  }

  private setHolding(holding: boolean): void {
    if (this.#holding === holding) return;
    this.#holding = holding;
    this.logger.info(
      { instance: this.instance },
      holding ? "this replica places jobs now (it holds the placement lease)" : "this replica no longer places jobs",
    );
    this.onChange(holding);
  }
}
