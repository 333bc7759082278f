import { DiscardPolicy, RetentionPolicy, StorageType, type JetStreamManager } from "@nats-io/jetstream";
import { headers, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { z } from "zod";
import { decodeJson, ensureStream, STREAMS, subjects, type TopologyOptions } from "../../../shared/nats/index.js";

/** A counter's total as the server keeps it: a decimal string (it may exceed 2^53). */
const CounterValue = z.object({ val: z.string() });
/** A counter is a few bytes: this holds millions of businesses. */
export const ARTIFACT_USAGE_MAX_BYTES = 256 * 1024 * 1024;
const INCREMENT_TIMEOUT_MS = 2_000;

export interface Business {
  app_id: string;
  business_id: string;
}

/**
 * The bytes of artifacts each business keeps stored, one NATS counter per business in
 * `CJS_ARTIFACT_USAGE` (`Nats-Incr`): an upload adds its size (less the version it
 * replaced), a removal takes it away. Counters add up whatever the order and need no
 * compare-and-set, so many uploads of one business never contend. Never expires: it is a
 * stock, not a rate.
 */
export class ArtifactUsage {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly logger: Logger,
  ) {}

  static async open(nc: NatsConnection, jsm: JetStreamManager, topology: TopologyOptions & { logger: Logger }) {
    await ensureStream(
      jsm,
      {
        name: STREAMS.artifactUsage,
        subjects: [subjects.artifactUsageAll()],
        retention: RetentionPolicy.Limits,
        allow_msg_counter: true,
        // Only a business's total matters: each increment replaces the one before.
        max_msgs_per_subject: 1,
        max_bytes: ARTIFACT_USAGE_MAX_BYTES,
        // A counter stream must drop its oldest when full (the server allows no other policy): the
        // business whose count changed longest ago would count from zero. Millions fit first.
        discard: DiscardPolicy.Old,
        storage: StorageType.File,
        num_replicas: topology.replicas,
      },
      { logger: topology.logger },
    );
    return new ArtifactUsage(nc, jsm, topology.logger);
  }

  /** Bytes the business keeps stored, every gateway's uploads and removals counted; 0 before its first. */
  async used(business: Business): Promise<number> {
    const subject = subjects.artifactUsageOfBusiness(business.app_id, business.business_id);
    const last = await this.jsm.streams.getMessage(STREAMS.artifactUsage, { last_by_subj: subject });
    return last ? Math.max(0, Number(CounterValue.parse(decodeJson(last.data)).val)) : 0;
  }

  /**
   * Adds `bytes` (negative for a removal) to the business's count. The artifact is already
   * stored or removed: a count that fails is logged, not thrown, and errs by that artifact
   * (an increment whose answer was lost and is not sent again may or may not have counted).
   */
  async add(business: Business, bytes: number): Promise<void> {
    if (bytes === 0) return;
    const subject = subjects.artifactUsageOfBusiness(business.app_id, business.business_id);
    const increment = headers();
    increment.set("Nats-Incr", bytes > 0 ? `+${bytes}` : String(bytes));
    try {
      const answer = await this.nc.request(subject, new Uint8Array(), {
        headers: increment,
        timeout: INCREMENT_TIMEOUT_MS,
      });
      // A refusal (the stream full, say) answers an error, not a total.
      CounterValue.parse(decodeJson(answer.data));
    } catch (error) {
      this.logger.warn(
        { err: error, business_id: business.business_id, bytes },
        "could not count an artifact's bytes in its business's usage; the count is off by that much",
      );
    }
  }
}
