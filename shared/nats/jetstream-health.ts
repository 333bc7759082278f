import { DiscardPolicy, jetstreamManager, type JetStreamManager, type StreamInfo } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  jetStreamApiErrors,
  jetStreamReady,
  jetStreamStorageBytes,
  jetStreamStorageLimitBytes,
  streamFillRatio,
  streamsWithoutLeader,
} from "./nats-metrics.js";

/** A probe that takes longer than this counts as failed: a JetStream without leaders often does not answer at all. */
const PROBE_TIMEOUT_MS = 2_000;
/**
 * Past this share of the store's size, or of a `discard: new` stream's `max_bytes`, the
 * service is not ready: writes are about to be refused for every tenant. The alerts warn
 * well before (docs/operations.md, `CjsJetStreamStorageHigh`). An object store is the
 * exception: full, it refuses only new objects (artifact uploads), while every other
 * operation goes on, so it is exported but does not judge readiness.
 */
export const STORAGE_NOT_READY_RATIO = 0.98;
/** The stream of an object store (`OBJ_<store>`). */
const OBJECT_STORE_PREFIX = "OBJ_";

export interface JetStreamHealth {
  /** True while the last probe succeeded; false before the first one has. */
  ready(): boolean;
  /** False while the store, or a stream that refuses writes when full, is past `STORAGE_NOT_READY_RATIO` of its size. */
  storageReady(): boolean;
  /** Resolves once a probe has succeeded (at once when the last one did). */
  untilReady(): Promise<void>;
  /** Ends the probing; `ready()` stays as it was. */
  stop(): void;
}

/**
 * Asks JetStream, every `intervalMs` after the previous answer, whether it can serve the
 * given streams: each must answer its info with a leader. A connection that is up says
 * nothing about that (a cluster that lost its majority keeps accepting clients). The
 * account info must answer too. Each probe's result is exported under `service`:
 * `cjs_jetstream_ready` and `cjs_jetstream_streams_without_leader`, and the storage the
 * store and each byte-limited stream use (`storageReady`, `cjs_jetstream_storage_bytes`,
 * `cjs_jetstream_storage_limit_bytes`, `cjs_jetstream_stream_fill_ratio`).
 */
export function jetStreamHealth(
  nc: NatsConnection,
  streams: () => readonly string[],
  { intervalMs, service, maxStoreBytes }: { intervalMs: number; service: string; maxStoreBytes?: number | undefined },
): JetStreamHealth {
  let ready = false;
  let storageReady = true;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let waiters: (() => void)[] = [];

  /**
   * The store's use against its size (the account's limit, else the configured one), and
   * each byte-limited stream's against its `max_bytes`: exported, and judged for readiness.
   */
  const judgeStorage = async (jsm: JetStreamManager, infos: readonly StreamInfo[]): Promise<void> => {
    const account = await jsm.getAccountInfo();
    const accountLimit = account.limits.max_storage;
    const limit = accountLimit > 0 ? accountLimit : (maxStoreBytes ?? 0);
    jetStreamStorageBytes.set({ service }, account.storage);
    jetStreamStorageLimitBytes.set({ service }, limit);
    let full = limit > 0 && account.storage >= limit * STORAGE_NOT_READY_RATIO;
    for (const { config, state } of infos) {
      if (config.max_bytes <= 0) continue;
      const ratio = state.bytes / config.max_bytes;
      const discard = config.discard === DiscardPolicy.New ? "new" : "old";
      streamFillRatio.set({ service, stream: config.name, discard }, ratio);
      if (discard === "new" && !config.name.startsWith(OBJECT_STORE_PREFIX) && ratio >= STORAGE_NOT_READY_RATIO)
        full = true;
    }
    storageReady = !full;
  };

  /** The number of streams without a leader (one that did not answer counts), or null when JetStream itself did not answer. */
  const probeOnce = async (): Promise<number | null> => {
    try {
      const jsm = await jetstreamManager(nc, { timeout: PROBE_TIMEOUT_MS, checkAPI: false });
      const names = streams();
      const infos = await Promise.allSettled(names.map((name) => jsm.streams.info(name)));
      const failed = infos.filter((info) => info.status === "rejected").length;
      if (failed > 0) jetStreamApiErrors.inc({ operation: "stream_info" }, failed);
      const answered = infos.flatMap((info) => (info.status === "fulfilled" ? [info.value] : []));
      await judgeStorage(jsm, answered);
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
    storageReady: () => storageReady,
    untilReady: () => (ready ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve))),
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
