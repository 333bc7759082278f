import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { Clock } from "../../shared/runtime/index.js";
import type { NodeRegistryConfig } from "./config.js";
import type { RegistryStore } from "./registry-store.js";

/** Everything the registry's handlers and sweep share; built once the buckets are open. */
export interface RegistryContext {
  nc: NatsConnection;
  config: Readonly<NodeRegistryConfig>;
  logger: Logger;
  clock: Clock;
  store: RegistryStore;
  /** Since when this replica has been connected to NATS without a break (epoch ms). */
  listeningSinceMs: () => number;
}
