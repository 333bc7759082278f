import { describe, expect, it } from "vitest";
import { allProcesses, clusterLayout, type ClusterSettings, IDENTITY_VARIABLE, PORT_SPAN } from "./layout.js";

const settings: ClusterSettings = {
  dir: "/state",
  basePort: 18_000,
  root: "/repo",
  natsServer: "/bin/nats-server",
  haproxy: "/usr/sbin/haproxy",
  node: "/bin/node",
};

describe("the local cluster's layout", () => {
  const layout = clusterLayout(settings, [
    { appId: "local", apiKey: "key-one" },
    { appId: "local", apiKey: "key-two" },
  ]);
  const processes = allProcesses(layout);

  it("runs 3 nats-servers, every service twice, one load balancer and 2 agents, each under its own name", () => {
    expect(processes.map((spec) => spec.name)).toEqual([
      "nats-1",
      "nats-2",
      "nats-3",
      "gateway-1",
      "gateway-2",
      "scheduler-1",
      "scheduler-2",
      "node-registry-1",
      "node-registry-2",
      "log-relay-1",
      "log-relay-2",
      "billing-1",
      "billing-2",
      "webhooks-1",
      "webhooks-2",
      "lb",
      "agent-1",
      "agent-2",
    ]);
  });

  it("gives every process its own ports, all within the base port's span", () => {
    const ports = processes.flatMap((spec) => spec.ports);
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) expect(port - settings.basePort).toBeGreaterThanOrEqual(0);
    for (const port of ports) expect(port - settings.basePort).toBeLessThan(PORT_SPAN);
    for (const spec of layout.services) expect(spec.env.CJS_OPS_PORT).toBe(String(spec.ports.at(-1)));
  });

  it("writes each nats-server a config with sync_interval always, its own name, and routes to the two others", () => {
    const configs = layout.nats.map((spec) => spec.files[0]!.text);
    for (const [index, text] of configs.entries()) {
      expect(text).toContain('sync_interval: "always"');
      expect(text).toContain(`server_name: "n${index + 1}"`);
      const routes = [...text.matchAll(/nats-route:\/\/127\.0\.0\.1:(\d+)/g)].map((match) => Number(match[1]));
      const own = layout.nats[index]!.ports[1];
      expect(routes).toHaveLength(2);
      expect(routes).not.toContain(own);
    }
  });

  it("points every service at all three NATS nodes with R3 streams", () => {
    for (const spec of layout.services) {
      expect(spec.env.NATS_URL).toBe(layout.natsUrls.join(","));
      expect(spec.env.CJS_NATS_REPLICAS).toBe("3");
    }
  });

  it("puts the gateways behind the load balancer, and the agents behind the load balancer on the operator pool", () => {
    const gatewayPorts = layout.services
      .filter((spec) => spec.name.startsWith("gateway-"))
      .map((spec) => Number(spec.env.CJS_PORT));
    const lbConfig = layout.lb.files[0]!.text;
    for (const port of gatewayPorts) expect(lbConfig).toContain(`127.0.0.1:${port} check`);
    expect(layout.lbUrl).toBe("http://127.0.0.1:18000");
    expect(layout.agents.map((spec) => [spec.env.CJS_GATEWAY_URL, spec.env.CJS_POOL, spec.env.CJS_API_KEY])).toEqual([
      [layout.lbUrl, "default", "key-one"],
      [layout.lbUrl, "default", "key-two"],
    ]);
    expect(new Set(layout.agents.map((spec) => spec.env.CJS_WORK_DIR)).size).toBe(2);
  });

  it("marks every process with an identity naming the state dir and the process", () => {
    for (const spec of processes) expect(spec.env[IDENTITY_VARIABLE]).toBe(`/state#${spec.name}`);
  });

  it("refuses a base port whose span does not fit below 65536", () => {
    expect(() => clusterLayout({ ...settings, basePort: 65_500 })).toThrow(/base port 65500/);
  });
});
