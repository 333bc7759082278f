import type { NatsConnection } from "@nats-io/transport-node";
import { type ConnectOptions, connectNats, type JetStreamHealth } from "../nats/index.js";
import type { Logger } from "../runtime/index.js";

/** A wait shorter than this is a normal start and goes unmentioned. */
const FIRST_NOTICE_MS = 1_000;
const NOTICE_EVERY_MS = 15_000;

/** Calls `notice` with the time waited after a second and then every 15 s, until `waiting` settles. */
async function noticeWhile<T>(waiting: Promise<T>, notice: (waitedMs: number) => void): Promise<T> {
  const since = Date.now();
  let timer = setTimeout(function tick() {
    notice(Date.now() - since);
    timer = setTimeout(tick, NOTICE_EVERY_MS);
  }, FIRST_NOTICE_MS);
  try {
    return await waiting;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `connectNats`, which waits for NATS as long as it takes, telling the log what it waits
 * for: an operator looking at a process that is not ready sees the URL it cannot reach.
 */
export async function connectWhenReachable(options: ConnectOptions): Promise<NatsConnection> {
  const { url, logger } = options;
  const nc = await noticeWhile(connectNats(options), (waitedMs) =>
    logger.warn({ nats_url: url, waited_ms: waitedMs }, `waiting for NATS at ${url}`),
  );
  logger.info({ nats_url: url, server: nc.getServer() }, `connected to NATS at ${nc.getServer()}`);
  return nc;
}

/** Waits until JetStream answers through the connection, logging the wait as `connectWhenReachable` does. */
export async function untilJetStreamReady(health: JetStreamHealth, url: string, logger: Logger): Promise<void> {
  await noticeWhile(health.untilReady(), (waitedMs) =>
    logger.warn({ nats_url: url, waited_ms: waitedMs }, `waiting for JetStream at ${url}`),
  );
}
