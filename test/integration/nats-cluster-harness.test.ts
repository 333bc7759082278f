import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { startNatsCluster } from "../harness/nats-cluster.js";

/** Bound on a leader election or a replica catching up; both take seconds. */
const CLUSTER_WAIT_MS = 30_000;

/** The stream's leader and whether every replica is current, as the node `jsm` talks to sees it; undefined while it cannot answer. */
async function streamCluster(jsm: JetStreamManager, stream: string) {
  try {
    const { cluster } = await jsm.streams.info(stream);
    return { leader: cluster?.leader, allCurrent: (cluster?.replicas ?? []).every((replica) => replica.current) };
  } catch {
    return undefined;
  }
}

describe("nats cluster harness", () => {
  it("starts three routed servers with JetStream that accept R3 buckets, on distinct client URLs joined into one NATS_URL", async () => {
    await using cluster = await startNatsCluster();
    expect(cluster.urls).toHaveLength(3);
    expect(new Set(cluster.urls).size).toBe(3);
    expect(cluster.url).toBe(cluster.urls.join(","));
    expect(cluster.replicas).toBe(3);

    const nc = await connect({ servers: cluster.urls[0] });
    try {
      const kv = await new Kvm(nc).create("harness_r3", { replicas: cluster.replicas });
      const { cluster: info } = await (await jetstreamManager(nc)).streams.info("KV_harness_r3");
      expect(info?.replicas).toHaveLength(2);
      await kv.put("k", "v");
      expect((await kv.get("k"))?.string()).toBe("v");
    } finally {
      await nc.close();
    }
  });

  it("with one node killed, writes through each of the other two succeed; the restarted node rejoins and catches up", async () => {
    await using cluster = await startNatsCluster();
    const bucket = "harness_quorum";
    const connections: NatsConnection[] = [];
    const connectTo = async (index: number) => {
      // One server each, no failover: a write must go through the node named.
      const nc = await connect({
        servers: cluster.urls[index],
        ignoreClusterUpdates: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 100,
      });
      connections.push(nc);
      return nc;
    };
    try {
      await new Kvm(await connectTo(0)).create(bucket, { replicas: cluster.replicas });
      await cluster.kill(0);

      const [second, third] = [await connectTo(1), await connectTo(2)];
      // Killing the node may have taken the stream's leader with it; the two survivors elect another.
      const jsm = await jetstreamManager(second, { checkAPI: false });
      await expect
        .poll(async () => (await streamCluster(jsm, `KV_${bucket}`))?.leader, {
          timeout: CLUSTER_WAIT_MS,
          interval: 200,
        })
        .toMatch(/^n[23]$/);
      await (await new Kvm(second).open(bucket)).put("via-second", "2");
      await (await new Kvm(third).open(bucket)).put("via-third", "3");

      await cluster.restart(0);
      const first = await connectTo(0);
      const viaFirst = await jetstreamManager(first, { checkAPI: false });
      await expect
        .poll(async () => (await streamCluster(viaFirst, `KV_${bucket}`))?.allCurrent, {
          timeout: CLUSTER_WAIT_MS,
          interval: 200,
        })
        .toBe(true);
      const kv = await new Kvm(first).open(bucket);
      expect((await kv.get("via-second"))?.string()).toBe("2");
      expect((await kv.get("via-third"))?.string()).toBe("3");
      await kv.put("via-first", "1");
    } finally {
      await Promise.all(connections.map((nc) => nc.close()));
    }
  });

  it("after stop no node accepts a connection, and a second stop does nothing", async () => {
    const cluster = await startNatsCluster();
    await cluster.stop();
    for (const url of cluster.urls)
      await expect(connect({ servers: url, reconnect: false, timeout: 1_000 })).rejects.toThrow();
    await cluster.stop();
    await expect(cluster.restart(0)).rejects.toThrow(/stopped/);
  });
});
