import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";

export interface ConnectOptions {
  /** One URL or a comma-separated list of servers. */
  url: string;
  /** Shown in the server's connection list (`nats server report connections`). */
  name: string;
  logger: Logger;
}

/**
 * Connects and keeps reconnecting forever: a service outlives a NATS restart instead of
 * exiting. The first connect waits for the server too, so start order does not matter.
 */
export async function connectNats({ url, name, logger }: ConnectOptions): Promise<NatsConnection> {
  const nc = await connect({
    servers: url.split(",").map((server) => server.trim()),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    pingInterval: 10_000,
  });
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect" || status.type === "reconnect") {
        logger.warn({ nats: status.type, server: status.server }, `nats ${status.type}`);
      } else if (status.type === "error") {
        logger.error({ err: status.error }, "nats error");
      }
    }
  })();
  return nc;
}
