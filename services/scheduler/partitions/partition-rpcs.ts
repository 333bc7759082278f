import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { type ServeRpcOptions, serveRpc } from "../../../shared/nats/index.js";
import { partitionAddress } from "../../../shared/records/index.js";
import type { Logger } from "../../../shared/runtime/index.js";

/** The handlers of the RPCs a replica answers on its partitions' subjects. */
export interface PartitionHandlers {
  result: ServeRpcOptions<"nodeResultOfPartition">["handle"];
  delivered: ServeRpcOptions<"nodeDeliveredOfPartition">["handle"];
}

/**
 * The RPCs a replica answers on the subjects of the partitions it owns: a node's result
 * (`nodeResultOfPartition`) and an attempt a gateway gave a node (`nodeDeliveredOfPartition`),
 * asked there by the gateway, come to the replica that holds the job's record and writes,
 * mostly, its node's reservations. A partition's subject is
 * served once the replica has read the partition, and left when it no longer owns it;
 * two replicas that both believe they own one share its requests (one queue group), and
 * either answers right: routing saves work, it decides nothing.
 */
export class PartitionRpcs {
  readonly #served = new Map<number, Subscription[]>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly queue: string,
    private readonly logger: Logger,
    private readonly handlers: PartitionHandlers,
  ) {}

  /** Serves the subjects of `owned` and leaves those of partitions no longer in it. */
  follow(owned: ReadonlySet<number>): void {
    for (const [partition, subscriptions] of this.#served) {
      if (owned.has(partition)) continue;
      this.#served.delete(partition);
      // Requests already delivered are answered; new ones find the new owner or the shared subject.
      for (const subscription of subscriptions) void subscription.drain().catch(() => undefined);
    }
    for (const partition of owned) {
      if (this.#served.has(partition)) continue;
      const on = { address: partitionAddress(partition), queue: this.queue, logger: this.logger };
      this.#served.set(partition, [
        serveRpc(this.nc, "nodeResultOfPartition", { ...on, handle: this.handlers.result }),
        serveRpc(this.nc, "nodeDeliveredOfPartition", { ...on, handle: this.handlers.delivered }),
      ]);
    }
  }

  /** Leaves every partition's subjects, answering what was delivered. */
  async stop(): Promise<void> {
    const served = [...this.#served.values()].flat();
    this.#served.clear();
    await Promise.all(served.map((subscription) => subscription.drain().catch(() => undefined)));
  }
}
