import { createBunRedisClient, type IRedisClient } from "bullmq";
import { RespConnection } from "./resp-connection.js";

/** A connection for one BullMQ Queue or Worker, and which driver carries it. */
export interface BullConnection {
  client: IRedisClient;
  /** `ioredis` (BullMQ's reference driver) or `bench RESP client` (see resp-connection.ts). */
  driver: string;
  close(): Promise<void>;
}

type IORedisConstructor = new (options: Record<string, unknown>) => IRedisClient & { quit(): Promise<unknown> };

let ioredis: Promise<IORedisConstructor | undefined> | undefined;

/** ioredis when it is installed (a name in a variable: it is not a dependency, so the type checker must not look for it). */
function loadIORedis(): Promise<IORedisConstructor | undefined> {
  const name = "ioredis";
  ioredis ??= import(name).then(
    (module: { default?: IORedisConstructor }) => module.default ?? (module as unknown as IORedisConstructor),
    () => undefined,
  );
  return ioredis;
}

/**
 * A new connection to the redis-server on `port`: through ioredis, BullMQ's default,
 * when it is installed; otherwise through the bench's RESP connection under BullMQ's
 * own Bun adapter. Each Queue and Worker gets its own (a Worker duplicates it for its
 * blocking reads), as each would in an application.
 */
export async function bullConnection(port: number, name: string): Promise<BullConnection> {
  const IORedis = await loadIORedis();
  if (IORedis) {
    const client = new IORedis({ host: "127.0.0.1", port, maxRetriesPerRequest: null, connectionName: name });
    return { client, driver: "ioredis", close: async () => void (await client.quit().catch(() => undefined)) };
  }
  const raw = new RespConnection({ host: "127.0.0.1", port });
  const client = createBunRedisClient(raw);
  return { client, driver: "bench RESP client (BullMQ's Bun adapter)", close: async () => void (await client.quit().catch(() => undefined)) };
}
