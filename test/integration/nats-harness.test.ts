import { existsSync } from "node:fs";
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { startNats } from "../harness/nats-server.js";

const ownsServer = process.env.NATS_URL === undefined;

describe("nats-server harness", () => {
  it("serves JetStream: a KV value put is read back", async () => {
    await using nats = await startNats();
    const nc = await connect({ servers: nats.url });
    try {
      const kv = await new Kvm(nc).create(`harness_put_get_${process.pid}`);
      await kv.put("greeting", "hello");
      expect((await kv.get("greeting"))?.string()).toBe("hello");
    } finally {
      await nc.close();
    }
  });

  it.skipIf(!ownsServer)("restart keeps a KV value written before it, on the same URL", async () => {
    await using nats = await startNats();
    const bucket = "harness_restart";
    const before = await connect({ servers: nats.url });
    await (await new Kvm(before).create(bucket)).put("job", "queued");
    await before.close();

    await nats.restart();

    const after = await connect({ servers: nats.url });
    try {
      const kv = await new Kvm(after).open(bucket);
      expect((await kv.get("job"))?.string()).toBe("queued");
    } finally {
      await after.close();
    }
  });

  it.skipIf(!ownsServer)("restart after kill recovers a KV value from the store", async () => {
    await using nats = await startNats();
    const bucket = "harness_kill";
    const before = await connect({ servers: nats.url });
    await (await new Kvm(before).create(bucket)).put("job", "running");
    await before.close();

    await nats.kill();
    await expect(connect({ servers: nats.url, reconnect: false, timeout: 1_000 })).rejects.toThrow();
    await nats.restart();

    const after = await connect({ servers: nats.url });
    try {
      expect((await (await new Kvm(after).open(bucket)).get("job"))?.string()).toBe("running");
    } finally {
      await after.close();
    }
  });

  it.skipIf(!ownsServer)("after stop a connection is refused and the store is removed", async () => {
    const nats = await startNats();
    const storeDir = nats.storeDir;
    await nats.stop();

    await expect(connect({ servers: nats.url, reconnect: false, timeout: 1_000 })).rejects.toThrow();
    expect(storeDir).toBeDefined();
    expect(existsSync(storeDir ?? "")).toBe(false);
    await expect(nats.restart()).rejects.toThrow(/stopped/);
  });
});
