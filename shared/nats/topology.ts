import { setTimeout as delay } from "node:timers/promises";
import { JetStreamApiError, jetstreamManager, type JetStreamManager, type StreamConfig } from "@nats-io/jetstream";
import { Kvm, type KV, type KvOptions } from "@nats-io/kv";
import { Objm, type ObjectStore } from "@nats-io/obj";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { BUCKETS, type BucketName, type ObjectStoreName } from "./names.js";
import { mayPassSoon } from "./unavailable.js";

const MINUTE_MS = 60_000;

/** Per-bucket settings. Buckets whose records expire on their own carry a TTL. */
const BUCKET_OPTIONS: Record<BucketName, Partial<KvOptions>> = {
  [BUCKETS.apps]: { history: 1 },
  [BUCKETS.businesses]: { history: 1 },
  [BUCKETS.users]: { history: 1 },
  [BUCKETS.businessUsers]: { history: 1 },
  [BUCKETS.userEmails]: { history: 1 },
  [BUCKETS.apiKeys]: { history: 1 },
  [BUCKETS.apiKeyOwners]: { history: 1 },
  // Longer than the longest refresh-token lifetime the gateway accepts (90 days).
  [BUCKETS.sessions]: { history: 1, ttl: 91 * 24 * 60 * MINUTE_MS },
  [BUCKETS.otpCodes]: { history: 1, ttl: 15 * MINUTE_MS },
  [BUCKETS.loginGuards]: { history: 1, ttl: 24 * 60 * MINUTE_MS },
  [BUCKETS.signingKeys]: { history: 1 },
  [BUCKETS.jobs]: { history: 1 },
  [BUCKETS.nodes]: { history: 1 },
  [BUCKETS.allocations]: { history: 1 },
  [BUCKETS.artifactIndex]: { history: 1 },
  [BUCKETS.subscriptions]: { history: 1 },
  [BUCKETS.keyQuotas]: { history: 1 },
  [BUCKETS.leases]: { history: 1 },
  // Longer than any provider retries a delivery (Stripe: 3 days); a replay past it is refused by its signature's age.
  [BUCKETS.webhookEvents]: { history: 1, ttl: 30 * 24 * 60 * MINUTE_MS },
  // Sessions expire long before this; the TTL only clears them away.
  [BUCKETS.checkoutSessions]: { history: 1, ttl: 7 * 24 * 60 * MINUTE_MS },
  [BUCKETS.billingSecrets]: { history: 1 },
  // Longer than the longest rate-limit window (an hour), so an idle user's counters vanish on their own.
  [BUCKETS.rateLimits]: { history: 1, ttl: 2 * 60 * MINUTE_MS },
  [BUCKETS.creditAccounts]: { history: 1 },
  [BUCKETS.creditEntries]: { history: 1 },
  // An Idempotency-Key is honoured for 24 h; the bucket's age limit is that promise.
  [BUCKETS.idempotency]: { history: 1, ttl: 24 * 60 * MINUTE_MS },
  [BUCKETS.webhooks]: { history: 1 },
  // Past the 24 h retry window, so the log answers for a week after the last attempt.
  [BUCKETS.webhookDeliveries]: { history: 1, ttl: 7 * 24 * 60 * MINUTE_MS },
  [BUCKETS.webhookKeys]: { history: 1 },
  [BUCKETS.schedules]: { history: 1 },
};

/**
 * Buckets whose delete markers carry their own lifetime (`Nats-TTL`, nats-server 2.11+):
 * a record removed for good leaves a marker the watches see, and the server then removes
 * the marker too, so the bucket does not grow with every record ever deleted.
 */
const MESSAGE_TTL_BUCKETS: ReadonlySet<BucketName> = new Set([BUCKETS.jobs, BUCKETS.schedules]);

export interface TopologyOptions {
  /** Stream replicas: 1 for a single server, 3 for a production cluster. */
  replicas: number;
  /** Where each retry is logged; retries are silent without one. */
  logger?: Logger | undefined;
}

/**
 * Tries of one provisioning call. Replicas that start together race to create the same
 * buckets, and a cluster that has just formed answers slowly or "temporarily
 * unavailable" while its leaders settle; together the pauses wait out about 16 s.
 */
const PROVISION_TRIES = 8;
const FIRST_PAUSE_MS = 250;
const MAX_PAUSE_MS = 4_000;

/** The streams provisioned through each connection: what its readiness check asks about. */
const provisioned = new WeakMap<NatsConnection, Set<string>>();

function remember(nc: NatsConnection | undefined, stream: string): void {
  if (!nc) return;
  const streams = provisioned.get(nc) ?? new Set<string>();
  streams.add(stream);
  provisioned.set(nc, streams);
}

/** Names of the streams (`KV_<bucket>`, `OBJ_<store>` included) created or opened through `nc` by this module. */
export function provisionedStreams(nc: NatsConnection): string[] {
  return [...(provisioned.get(nc) ?? [])].sort();
}

/** The connection a manager talks through: nats.js keeps it, but the manager's type does not say so. */
function connectionOf(jsm: JetStreamManager): NatsConnection | undefined {
  return (jsm as Partial<{ getConnection(): NatsConnection }>).getConnection?.();
}

/**
 * Runs an idempotent provisioning call, again after a pause when NATS did not answer or
 * JetStream refused (a leader moving, a racing create not yet visible). Bounded: a refusal
 * that lasts, such as more replicas than servers, fails after the last try.
 */
/** JetStream's "insufficient storage resources available": a stream's max_bytes does not fit what the store has left to reserve. */
const NO_ROOM_TO_RESERVE = 10047;

/**
 * The refusal of a size the store cannot reserve, said as what to change (without the API
 * error as its cause: that would read as a refusal worth retrying); any other error as it is.
 */
function explained(what: string, error: unknown): unknown {
  if (!(error instanceof JetStreamApiError) || error.code !== NO_ROOM_TO_RESERVE) return error;
  return new Error(
    `${what}: nats-server has no room left in its JetStream store to reserve this size ("${error.message}": each bounded stream reserves its max_bytes when it is made). Lower the setting that sizes it (CJS_LOGS_MAX_BYTES, CJS_ARTIFACT_STORE_MAX_BYTES) or give the store more room (nats-server's max_file_store; by default 75 % of the disk free at its start).`,
  );
}

async function provision<T>(what: string, logger: Logger | undefined, call: () => Promise<T>): Promise<T> {
  for (let tryNumber = 1; ; tryNumber += 1) {
    try {
      return await call();
    } catch (error) {
      const noRoom = error instanceof JetStreamApiError && error.code === NO_ROOM_TO_RESERVE;
      if (noRoom || !mayPassSoon(error) || tryNumber >= PROVISION_TRIES) throw explained(what, error);
      const pauseMs = Math.min(FIRST_PAUSE_MS * 2 ** (tryNumber - 1), MAX_PAUSE_MS);
      logger?.warn(
        { err: error, try: tryNumber, of: PROVISION_TRIES, retry_in_ms: pauseMs },
        `provisioning ${what} failed; trying again`,
      );
      await delay(pauseMs);
    }
  }
}

/**
 * Creates the buckets a service needs, or opens them when another replica already did.
 * Idempotent, so every replica runs it on start.
 *
 * Every bucket is read from its stream's leader (`allow_direct: false`): a direct get may
 * be answered by any replica of an R3 stream, one that has not seen the last write yet, so
 * a job just submitted through one gateway could be "not found" through another. A bucket
 * made with direct reads (by an older version) is switched before it is opened.
 */
export async function ensureBuckets<Names extends BucketName>(
  nc: NatsConnection,
  names: readonly Names[],
  { replicas, logger }: TopologyOptions,
): Promise<Record<Names, KV>> {
  const kvm = new Kvm(nc);
  const jsm = await jetstreamManager(nc);
  const allowMessageTtl = async (name: Names): Promise<void> => {
    const { config } = await jsm.streams.info(`KV_${name}`);
    // Switched on once (it cannot be switched off); buckets made before it was needed are upgraded here.
    if (!config.allow_msg_ttl) await jsm.streams.update(config.name, { ...config, allow_msg_ttl: true });
  };
  const createOrOpen = async (name: Names): Promise<KV> => {
    const kv = await createOrOpenBucket(name);
    if (MESSAGE_TTL_BUCKETS.has(name)) await allowMessageTtl(name);
    return kv;
  };
  const createOrOpenBucket = async (name: Names): Promise<KV> => {
    try {
      return await kvm.create(name, { ...BUCKET_OPTIONS[name], replicas, allow_direct: false });
    } catch (error) {
      // Two replicas creating the same bucket at once: the loser opens the winner's.
      try {
        const { config } = await jsm.streams.info(`KV_${name}`);
        if (config.allow_direct) await jsm.streams.update(config.name, { ...config, allow_direct: false });
        return await kvm.open(name);
      } catch {
        throw error;
      }
    }
  };
  const opened = await Promise.all(
    names.map(async (name) => {
      const kv = await provision(`bucket ${name}`, logger, () => createOrOpen(name));
      remember(nc, `KV_${name}`);
      return kv;
    }),
  );
  return Object.fromEntries(names.map((name, index) => [name, opened[index]])) as Record<Names, KV>;
}

/**
 * Creates a stream, or brings an existing one to this configuration. Idempotent and safe
 * when replicas race: the loser of a concurrent create finds the winner's stream.
 */
export async function ensureStream(
  jsm: JetStreamManager,
  config: Partial<StreamConfig> & { name: string },
  { logger }: Pick<TopologyOptions, "logger"> = {},
): Promise<void> {
  await provision(`stream ${config.name}`, logger, async () => {
    if (await jsm.streams.info(config.name).catch(() => null)) {
      await jsm.streams.update(config.name, config);
      return;
    }
    await jsm.streams.add(config).catch(async (error: unknown) => {
      if (!(await jsm.streams.info(config.name).catch(() => null))) throw error;
    });
  });
  remember(connectionOf(jsm), config.name);
}

/**
 * Creates an object store, or opens it when another replica already did, with its
 * `max_bytes` as given (an object store refuses a write when full: `discard: new`). One
 * made with another size (an older version's, or a changed setting) is resized. Idempotent,
 * so every replica runs it on start.
 */
export async function ensureObjectStore(
  nc: NatsConnection,
  name: ObjectStoreName,
  { replicas, logger, maxBytes }: TopologyOptions & { maxBytes: number },
): Promise<ObjectStore> {
  const objm = new Objm(nc);
  const store = await provision(`object store ${name}`, logger, async () => {
    try {
      return await objm.create(name, { replicas, max_bytes: maxBytes });
    } catch (error) {
      // Two replicas creating the same store at once: the loser opens the winner's.
      try {
        return await objm.open(name);
      } catch {
        throw error;
      }
    }
  });
  const stream = `OBJ_${name}`;
  await provision(`the size of object store ${name}`, logger, async () => {
    const jsm = await jetstreamManager(nc);
    const { config } = await jsm.streams.info(stream);
    if (config.max_bytes !== maxBytes) await jsm.streams.update(stream, { ...config, max_bytes: maxBytes });
  });
  remember(nc, stream);
  return store;
}
