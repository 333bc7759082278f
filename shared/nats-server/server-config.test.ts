import { describe, expect, it } from "vitest";
import { serverConfig } from "./server-config.js";

const base = { binary: "/bin/nats-server", host: "127.0.0.1", port: 4222, storeDir: '/tmp/store "a"' };

describe("serverConfig", () => {
  it("a single server listens on its address with JetStream in its store, and joins no cluster", () => {
    const text = serverConfig(base);
    expect(text).toContain('listen: "127.0.0.1:4222"');
    expect(text).toContain('store_dir: "/tmp/store \\"a\\""');
    expect(text).not.toContain("cluster");
    expect(text).not.toContain("server_name");
    expect(text).not.toContain("sync_interval");
  });

  it("a cluster member has its name, its route port, the others' routes, and the sync interval and extra lines asked for", () => {
    const text = serverConfig({
      ...base,
      serverName: "n2",
      cluster: { name: "c1", port: 6222, routes: ["nats-route://127.0.0.1:6221", "nats-route://127.0.0.1:6223"] },
      syncInterval: "always",
      extraConfig: "max_payload: 2MB",
    });
    expect(text).toContain('server_name: "n2"');
    expect(text).toContain('sync_interval: "always"');
    expect(text).toMatch(
      /cluster \{\n {2}name: "c1"\n {2}listen: "127.0.0.1:6222"\n {2}routes: \["nats-route:\/\/127.0.0.1:6221", "nats-route:\/\/127.0.0.1:6223"\]\n\}/,
    );
    expect(text.trimEnd().endsWith("max_payload: 2MB")).toBe(true);
  });
});
