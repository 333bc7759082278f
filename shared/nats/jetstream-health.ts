import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";

/** A probe that takes longer than this counts as failed: a JetStream without leaders often does not answer at all. */
const PROBE_TIMEOUT_MS = 2_000;

export interface JetStreamHealth {
  /** True while the last probe succeeded; false before the first one has. */
  ready(): boolean;
  /** Resolves once a probe has succeeded (at once when the last one did). */
  untilReady(): Promise<void>;
  /** Ends the probing; `ready()` stays as it was. */
  stop(): void;
}

/**
 * Asks JetStream, every `intervalMs` after the previous answer, whether it can serve the
 * given streams: each must answer its info with a leader. A connection that is up says
 * nothing about that (a cluster that lost its majority keeps accepting clients). With no
 * streams yet, the account info must answer.
 */
export function jetStreamHealth(nc: NatsConnection, streams: () => readonly string[], { intervalMs }: { intervalMs: number }): JetStreamHealth {
  let ready = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let waiters: (() => void)[] = [];

  const probeOnce = async (): Promise<boolean> => {
    try {
      const jsm = await jetstreamManager(nc, { timeout: PROBE_TIMEOUT_MS, checkAPI: false });
      const names = streams();
      if (names.length === 0) {
        await jsm.getAccountInfo();
        return true;
      }
      const infos = await Promise.all(names.map((name) => jsm.streams.info(name)));
      return infos.every((info) => Boolean(info.cluster?.leader));
    } catch {
      return false;
    }
  };

  const run = async (): Promise<void> => {
    ready = await probeOnce();
    if (ready) {
      for (const resolve of waiters) resolve();
      waiters = [];
    }
    if (!stopped) timer = setTimeout(() => void run(), intervalMs).unref();
  };
  void run();

  return {
    ready: () => ready,
    untilReady: () => (ready ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve))),
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
