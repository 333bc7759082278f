import { describe, expect, it } from "vitest";
import { haproxyConfig } from "./haproxy-config.js";

describe("the load balancer's configuration", () => {
  const text = haproxyConfig({
    host: "127.0.0.1",
    port: 18_000,
    gateways: [
      { name: "gateway-1", host: "127.0.0.1", port: 18_030 },
      { name: "gateway-2", host: "127.0.0.1", port: 18_031 },
    ],
  });

  it("listens on the given address and balances over every gateway with a health check", () => {
    expect(text).toContain("bind 127.0.0.1:18000");
    expect(text).toContain("server gateway-1 127.0.0.1:18030 check");
    expect(text).toContain("server gateway-2 127.0.0.1:18031 check");
  });

  it("sends traffic only to gateways whose /readyz answers 200", () => {
    expect(text).toContain("option httpchk GET /readyz");
    expect(text).toContain("http-check expect status 200");
  });

  it("retries only connection failures, never a request a gateway may have taken", () => {
    expect(text).toContain("retries 3");
    expect(text).not.toContain("retry-on");
  });

  it("keeps the per-address connection budget the gateways behind it cannot see", () => {
    expect(text).toContain("tcp-request connection track-sc0 src");
    expect(text).toContain("tcp-request connection reject if { sc0_conn_cur gt 256 }");
  });

  it("refuses a balancer without gateways", () => {
    expect(() => haproxyConfig({ host: "127.0.0.1", port: 1, gateways: [] })).toThrow(/at least one gateway/);
  });
});
