import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetStreamApiErrors, jetStreamReady, streamsWithoutLeader } from "./nats-metrics.js";

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
 * streams yet, the account info must answer. Each probe's result is exported under
 * `service`: `cjs_jetstream_ready` and `cjs_jetstream_streams_without_leader`.
 */
export function jetStreamHealth(
  nc: NatsConnection,
  streams: () => readonly string[],
  { intervalMs, service }: { intervalMs: number; service: string },
): JetStreamHealth {
  let ready = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let waiters: (() => void)[] = [];

  /** The number of streams without a leader (one that did not answer counts), or null when JetStream itself did not answer. */
  const probeOnce = async (): Promise<number | null> => {
    try {
      const jsm = await jetstreamManager(nc, { timeout: PROBE_TIMEOUT_MS, checkAPI: false });
      const names = streams();
      if (names.length === 0) {
        await jsm.getAccountInfo();
        return 0;
      }
      const infos = await Promise.allSettled(names.map((name) => jsm.streams.info(name)));
      const failed = infos.filter((info) => info.status === "rejected").length;
      if (failed > 0) jetStreamApiErrors.inc({ operation: "stream_info" }, failed);
      return infos.filter((info) => info.status === "rejected" || !info.value.cluster?.leader).length;
    } catch {
      jetStreamApiErrors.inc({ operation: "stream_info" });
      return null;
    }
  };

  const run = async (): Promise<void> => {
    const withoutLeader = await probeOnce();
    ready = withoutLeader === 0;
    jetStreamReady.set({ service }, ready ? 1 : 0);
    streamsWithoutLeader.set({ service }, withoutLeader ?? streams().length);
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
