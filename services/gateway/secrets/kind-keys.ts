import { KvWatchInclude } from "@nats-io/kv";
import type { Logger } from "pino";
import type { z } from "zod";
import { decodeJson, type JsonBucket } from "../../../shared/nats/index.js";
import type { Clock } from "../../../shared/runtime/index.js";
import { reloadKeyFile } from "./key-file-reload.js";
import { describeRing, LiveRing } from "./key-ring.js";
import type { ConfiguredKeys, KeyKind } from "./key-sources.js";
import type { KvKeyKind } from "./kv-keys.js";

/** What a rotation made: the new signing key and the keys still accepted beside it. */
export interface Rotation {
  kid: string;
  retired: Array<{ kid: string; not_after: string }>;
}

/** The keys of one kind of secret, wherever they live, kept current while the gateway runs. */
export interface KindKeys<K> {
  readonly live: LiveRing<K>;
  /** The setting the keys come from, or null when they live in NATS KV. */
  readonly variable: string | null;
  /** Makes a new signing key and retires the current one until `notAfterMs` (KV only). */
  rotate(notAfterMs: number): Promise<Rotation>;
  stop(): void;
}

interface Common {
  clock: Clock;
  logger: Logger;
}

/** Keys from a setting; those from a file follow its changes. */
export function configuredKindKeys<K>(
  configured: ConfiguredKeys<K>,
  kind: KeyKind<K>,
  { logger, reloadIntervalMs }: Common & { reloadIntervalMs: number },
): KindKeys<K> {
  const live = new LiveRing(configured.ring);
  const { path } = configured;
  const reload =
    path === null ? null : reloadKeyFile({ ...configured, path }, kind, live, { logger, intervalMs: reloadIntervalMs });
  logger.info(
    { kind: kind.name, source: configured.variable, ...describeRing(configured.ring) },
    "signing keys loaded",
  );
  return {
    live,
    variable: configured.variable,
    rotate: () => Promise.reject(new Error(`keys come from ${configured.variable}`)),
    stop: () => reload?.stop(),
  };
}

/**
 * Keys kept in the `cjs_signing_keys` bucket: made by the first replica that starts, and
 * followed through a KV watch, so a rotation on one replica reaches every replica. The
 * watch starts before the first read, so no change between them is missed.
 */
export async function kvKindKeys<R, K>(
  bucket: JsonBucket<z.ZodType<R>>,
  kind: KvKeyKind<R, K>,
  { clock, logger }: Common,
): Promise<KindKeys<K>> {
  const watcher = await bucket.kv.watch({ key: kind.key, include: KvWatchInclude.UpdatesOnly });
  let stored;
  try {
    stored = await bucket.upsert(kind.key, (current) => current ?? kind.fresh(clock.now()));
  } catch (error) {
    watcher.stop();
    throw error;
  }
  if (!stored) throw new Error(`the ${kind.name} signing key could not be made or read`);
  const live = new LiveRing(kind.ring(stored.value));
  let revision = stored.revision;
  const adopt = (record: R, at: number) => {
    if (at <= revision) return;
    revision = at;
    const ring = kind.ring(record);
    live.replace(ring);
    logger.info({ kind: kind.name, source: "nats-kv", ...describeRing(ring) }, "signing keys reloaded");
  };
  void (async () => {
    for await (const entry of watcher) {
      if (entry.operation !== "PUT") continue;
      try {
        adopt(bucket.schema.parse(decodeJson(entry.value)), entry.revision);
      } catch (error) {
        logger.error(
          { kind: kind.name, err: error },
          "signing keys not reloaded: the stored record is not valid; the previous keys stay in use",
        );
      }
    }
  })();
  return {
    live,
    variable: null,
    async rotate(notAfterMs) {
      const rotated = await bucket.mutate(kind.key, (record) => kind.rotate(record, clock.now(), notAfterMs));
      if (!rotated) throw new Error(`the ${kind.name} signing key record is missing`);
      adopt(rotated.value, rotated.revision);
      const ring = kind.ring(rotated.value);
      return {
        kid: ring.signer.kid,
        retired: ring.retired.map(({ kid, notAfterMs: end }) => ({
          kid,
          not_after: new Date(end ?? notAfterMs).toISOString(),
        })),
      };
    },
    stop: () => watcher.stop(),
  };
}
