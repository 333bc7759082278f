import { readFileSync } from "node:fs";
import { connect, credsAuthenticator, type ConnectionOptions, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { assertSupportedServer, isSupportedServerVersion, NATS_SERVER_MINIMUM } from "../nats-server/index.js";
import { ConfigError } from "../runtime/index.js";
import { natsConnectionUp, natsReconnects } from "./nats-metrics.js";

/** The NATS credential settings of `BaseConfig`. */
export interface NatsCredentials {
  NATS_CREDS_FILE?: string | undefined;
  NATS_TOKEN?: string | undefined;
  NATS_USER?: string | undefined;
  NATS_PASSWORD?: string | undefined;
}

/**
 * Connection options for the configured credential, if any (a creds file wins over a token
 * over a user). A creds file that cannot be read is a `ConfigError` naming `NATS_CREDS_FILE`.
 */
export function natsAuthOptions(credentials: NatsCredentials): Partial<ConnectionOptions> {
  if (credentials.NATS_CREDS_FILE) {
    let creds: Buffer;
    try {
      creds = readFileSync(credentials.NATS_CREDS_FILE);
    } catch (error) {
      throw new ConfigError([
        `NATS_CREDS_FILE: cannot read ${credentials.NATS_CREDS_FILE} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      ]);
    }
    return { authenticator: credsAuthenticator(creds) };
  }
  if (credentials.NATS_TOKEN) return { token: credentials.NATS_TOKEN };
  if (credentials.NATS_USER)
    return { user: credentials.NATS_USER, ...(credentials.NATS_PASSWORD ? { pass: credentials.NATS_PASSWORD } : {}) };
  return {};
}

export interface ConnectOptions {
  /** One URL or a comma-separated list of servers. */
  url: string;
  credentials?: NatsCredentials;
  /** Shown in the server's connection list (`nats server report connections`). */
  name: string;
  logger: Logger;
}

/**
 * Connects and keeps reconnecting forever: a service outlives a NATS restart instead of
 * exiting. The first connect waits for the server too, so start order does not matter.
 * A server older than the supported minimum is refused (`UnsupportedServerError`): its
 * clustered compare-and-set cannot be trusted. A reconnect to such a server is logged as an error.
 */
export async function connectNats({ url, name, logger, credentials = {} }: ConnectOptions): Promise<NatsConnection> {
  const nc = await connect({
    ...natsAuthOptions(credentials),
    servers: url.split(",").map((server) => server.trim()),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    pingInterval: 10_000,
    // Otherwise every request captures a stack trace up front: a fifth of the scheduler's busy time when profiled.
    noAsyncTraces: true,
  });
  try {
    assertSupportedServer(nc.info?.version, `${nc.getServer()}`);
  } catch (error) {
    await nc.close();
    throw error;
  }
  const connection = { connection: name };
  natsConnectionUp.set(connection, 1);
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect") natsConnectionUp.set(connection, 0);
      if (status.type === "reconnect") {
        natsConnectionUp.set(connection, 1);
        natsReconnects.inc(connection);
      }
      if (status.type === "disconnect" || status.type === "reconnect") {
        logger.warn({ nats: status.type, server: status.server }, `nats ${status.type}`);
        const version = nc.info?.version;
        if (status.type === "reconnect" && (version === undefined || !isSupportedServerVersion(version))) {
          logger.error(
            { server: status.server, version, required: NATS_SERVER_MINIMUM },
            `reconnected to nats-server ${version}, older than ${NATS_SERVER_MINIMUM}: compare-and-set is not safe on it`,
          );
        }
      } else if (status.type === "error") {
        logger.error({ err: status.error }, "nats error");
      }
    }
    // Closed on purpose (shutdown, a one-off connection): no longer a connection to watch.
    natsConnectionUp.remove(connection);
  })();
  return nc;
}
