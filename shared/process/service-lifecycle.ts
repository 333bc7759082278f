import { randomUUID } from "node:crypto";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import {
  type InternalRpcName,
  type AddressedRpc,
  type RpcAddress,
  type ServeRpcOptions,
  serveRpc,
  servePing,
} from "../nats/index.js";
import type { Logger, Service } from "../runtime/index.js";

/** What a service's `start` subscribes with. */
export interface ServiceRun {
  /** This replica's id: in its ping answer and its per-replica subjects. */
  readonly instance: string;
  /** Serves an internal RPC in the service's queue group until the service stops. */
  serve<N extends InternalRpcName>(
    name: N,
    handle: ServeRpcOptions<N>["handle"],
    ...[address]: N extends AddressedRpc ? [RpcAddress<N>] : []
  ): void;
  /** Keeps a subscription the service made itself: it is drained at stop like the RPCs. */
  keep(subscription: Subscription): void;
}

export interface ServiceLifecycleOptions {
  /** The service name: its ping subject (`cjs.ping.<name>`) and `Service.name`. */
  name: string;
  nc: NatsConnection;
  logger: Logger;
  /** The queue group its RPCs are served in: one replica takes each request. */
  queue: string;
  /** Whether every started replica answers the service's ping (default true). */
  ping?: boolean;
  /** Opens the service's stores, starts its parts and subscribes (`run.serve`, `run.keep`). */
  start(run: ServiceRun): Promise<void>;
  /**
   * Stops the service's parts. `drain` drains its subscriptions (letting requests in flight
   * be answered): called where the service's order needs it, else after `stop` returns.
   */
  stop?(drain: () => Promise<void>): Promise<void>;
}

export interface ServiceLifecycle extends Service {
  readonly instance: string;
}

/**
 * The start and stop every service shares: its subscriptions kept and drained at stop, its
 * ping answered once it has started, ready (`/readyz`) once started and the server knows
 * every subscription, not ready from the moment it begins to stop; a second `stop` waits
 * for the first.
 */
export function serviceLifecycle(options: ServiceLifecycleOptions): ServiceLifecycle {
  const { name, nc, logger, queue } = options;
  const instance = randomUUID();
  const subscriptions: Subscription[] = [];
  let started = false;
  let stopping: Promise<void> | undefined;
  let drained: Promise<void> | undefined;

  const run: ServiceRun = {
    instance,
    serve(rpc, handle, ...[address]) {
      const served = { ...address, queue, logger, handle } as unknown as ServeRpcOptions<typeof rpc>;
      subscriptions.push(serveRpc(nc, rpc, served));
    },
    keep(subscription) {
      subscriptions.push(subscription);
    },
  };
  const drain = (): Promise<void> =>
    (drained ??= Promise.all(subscriptions.map((subscription) => subscription.drain())).then(() => undefined));

  return {
    name,
    instance,
    async start() {
      await options.start(run);
      if (options.ping !== false) subscriptions.push(servePing(nc, { service: name, instance, logger }));
      // Ready only once the server knows the subscriptions.
      await nc.flush();
      started = true;
    },
    stop() {
      stopping ??= (async () => {
        await options.stop?.(drain);
        await drain();
      })();
      return stopping;
    },
    ready: () => started && stopping === undefined,
  };
}
