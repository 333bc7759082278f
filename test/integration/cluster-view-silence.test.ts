/**
 * The scheduler's cluster view (nodes and their reservations, kept by watching two KV
 * buckets) against a real nats-server, with a watch made deaf: the consumer of a watch
 * that lived on a NATS node that died delivers nothing, and nats.js makes it again only
 * after two missed 30 s heartbeats. The repair sweep's check (`recoverSilent`) finds such
 * a watch by two checks and makes it again from the revision after the last it brought.
 */
import type { KV } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../services/scheduler/config.js";
import { ClusterView } from "../../services/scheduler/placement/cluster-view.js";
import { openSchedulerStore, type SchedulerStore } from "../../services/scheduler/scheduler-store.js";
import { JsonBucket } from "../../shared/nats/index.js";
import { type NodeRecord, NodeRecord as NodeRecordSchema, selfHostedPoolKey } from "../../shared/records/index.js";
import { newId } from "../../shared/runtime/index.js";
import { nodeRecord } from "../harness/job-records.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";

let nats: NatsHarness;
let nc: NatsConnection;
let store: SchedulerStore;
const BUSINESS = newId("biz");

beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  store = await openSchedulerStore(nc, loadConfig({ NATS_URL: nats.url }), pino({ level: "silent" }));
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

function viewNode(nodeId: string): NodeRecord {
  return nodeRecord({
    node_id: nodeId,
    app_id: "app_view",
    business_id: BUSINESS,
    pool_id: "view",
    pool_key: selfHostedPoolKey(BUSINESS, "view"),
    created_at: new Date().toISOString(),
  });
}

/** A watch whose consumer is gone: it brings nothing until stopped. */
function deafWatcher(): { stop(): void; [Symbol.asyncIterator](): AsyncIterator<never> } {
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  return {
    stop,
    [Symbol.asyncIterator]: () => ({
      next: async (): Promise<IteratorResult<never>> => {
        await stopped;
        return { done: true, value: undefined };
      },
    }),
  };
}

/** The nodes bucket with its watches counted; the first `deaf` of them bring nothing. */
function nodesWatched(deaf: number): { store: SchedulerStore; watches: () => number } {
  let watches = 0;
  const kv = new Proxy(store.nodes.kv, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      if (property !== "watch") return bound;
      return (...args: unknown[]) => {
        watches += 1;
        return watches <= deaf ? Promise.resolve(deafWatcher()) : bound(...args);
      };
    },
  }) as KV;
  return { store: { ...store, nodes: new JsonBucket(kv, NodeRecordSchema) }, watches: () => watches };
}

describe("the cluster view's watches", () => {
  it("one silent while its bucket changes is made again by the second check, and brings what it missed and what comes after", async () => {
    const { store: deafStore, watches } = nodesWatched(1);
    const view = new ClusterView(deafStore, () => undefined);
    await view.start();
    const missed = newId("nod");
    await store.nodes.put(missed, viewNode(missed));
    // The first check sees the bucket ahead of the watch; a slow watch could still bring it.
    await view.recoverSilent();
    expect(view.nodes.has(missed)).toBe(false);
    expect(watches()).toBe(1);
    // Nothing came since: silent, made again from the revision after the last it brought.
    await view.recoverSilent();
    expect(watches()).toBe(2);
    await expect.poll(() => view.nodes.has(missed)).toBe(true);
    const later = newId("nod");
    await store.nodes.put(later, viewNode(later));
    await expect.poll(() => view.nodes.has(later)).toBe(true);
    view.stop();
  });

  it("one that brings its bucket's changes is left alone by the checks", async () => {
    const { store: liveStore, watches } = nodesWatched(0);
    const view = new ClusterView(liveStore, () => undefined);
    await view.start();
    for (let check = 0; check < 3; check += 1) {
      const nodeId = newId("nod");
      await store.nodes.put(nodeId, viewNode(nodeId));
      await expect.poll(() => view.nodes.has(nodeId)).toBe(true);
      await view.recoverSilent();
    }
    await view.recoverSilent();
    expect(watches()).toBe(1);
    view.stop();
  });
});
