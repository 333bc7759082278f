import { setTimeout as delay } from "node:timers/promises";
import { type JetStreamHealth, mayPassSoon } from "../nats/index.js";
import type { Logger, Service } from "../runtime/index.js";

/** Starts of one service tried before the process gives up (and exits 1). */
const START_TRIES = 5;
const PAUSE_MS = 1_000;

/**
 * Builds and starts a service; when the start fails because JetStream did not answer (a
 * cluster still electing leaders while many replicas provision at once), stops what was
 * half started and starts a fresh one once JetStream answers again. Any other failure,
 * or the last try's, is thrown.
 */
export async function startWithRetries<S extends Service>(
  build: () => S | Promise<S>,
  { name, logger, jetStream }: { name: string; logger: Logger; jetStream: JetStreamHealth },
): Promise<S> {
  for (let tryNumber = 1; ; tryNumber += 1) {
    let service: S | undefined;
    try {
      service = await build();
      await service.start();
      return service;
    } catch (error) {
      await service
        ?.stop()
        .catch((stopError: unknown) => logger.warn({ err: stopError }, `${name}: stopping the failed start failed`));
      if (!mayPassSoon(error) || tryNumber >= START_TRIES) throw error;
      logger.warn(
        { err: error, try: tryNumber, of: START_TRIES },
        `${name} could not start: JetStream did not answer; starting again`,
      );
      await delay(PAUSE_MS * tryNumber);
      await jetStream.untilReady();
    }
  }
}
