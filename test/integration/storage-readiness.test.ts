/**
 * `/readyz` tells when the JetStream store is nearly full: writes are about to fail for
 * every tenant, so the process is not ready, and it is again once room is made. A real
 * process (the node registry, through `runServiceProcess`) judges the store against
 * `CJS_JETSTREAM_MAX_STORE_BYTES`, which the test sets a little above what is stored. On
 * one server and on the 3-node cluster, where the account's storage figure comes from the
 * meta leader and follows the stream's replicas with a delay.
 */
import { jetstreamManager, jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { NATS_TOPOLOGIES } from "../harness/nats-topologies.js";
import { healthUrlOf, metricValue, readyz, serviceProcessEnv, untilReadyz } from "../harness/readiness.js";
import { startServiceProcess } from "../harness/service-process.js";

const CHANGE_WAIT_MS = 30_000;
const ROOM_BYTES = 2 * 1024 * 1024;

describe.each(NATS_TOPOLOGIES)("a service whose JetStream store is nearly full, on $name", (topology) => {
  it("answers /readyz 503 with jetstream_storage false, and 200 again once room is made", async () => {
    const nats = await topology.start();
    const nc = await connect({ servers: nats.url.split(",") });
    try {
      const jsm = await jetstreamManager(nc);
      const env = serviceProcessEnv("node-registry", nats.url, nats.replicas);
      // What the service's own buckets take once it has started, then a little room.
      const probe = startServiceProcess({ service: "node-registry", env });
      await untilReadyz(probe, await healthUrlOf(probe), 200, CHANGE_WAIT_MS);
      await probe.stop();
      const { storage } = await jsm.getAccountInfo();

      const child = startServiceProcess({
        service: "node-registry",
        env: { ...env, CJS_JETSTREAM_MAX_STORE_BYTES: String(storage + ROOM_BYTES) },
      });
      try {
        const url = await healthUrlOf(child);
        await untilReadyz(child, url, 200, CHANGE_WAIT_MS);
        expect((await readyz(url)).report?.checks.jetstream_storage).toBe(true);
        expect(await metricValue(url, 'cjs_jetstream_storage_limit_bytes{service="node-registry"}')).toBe(
          storage + ROOM_BYTES,
        );

        await jsm.streams.add({ name: "FILLER", subjects: ["filler.>"], num_replicas: nats.replicas });
        const js = jetstream(nc);
        const chunk = new Uint8Array(256 * 1024);
        for (let written = 0; written < ROOM_BYTES; written += chunk.length) await js.publish("filler.x", chunk);

        await untilReadyz(child, url, 503, CHANGE_WAIT_MS);
        expect((await readyz(url)).report?.checks).toMatchObject({
          nats: true,
          jetstream: true,
          jetstream_storage: false,
        });

        await jsm.streams.purge("FILLER");
        await untilReadyz(child, url, 200, CHANGE_WAIT_MS);
      } finally {
        await child.stop();
      }
    } finally {
      await nc.close();
      await nats.stop();
    }
  }, 120_000);
});
