import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { metricsRegistry } from "./metrics.js";
import { readiness, type ReadinessCheck } from "./health.js";

/**
 * The operations endpoints of a service without an HTTP API of its own:
 * `/metrics` (Prometheus), `/healthz` (the process is alive), `/readyz` (its checks pass).
 */
export async function startOpsServer(options: { host: string; port: number; checks: Record<string, ReadinessCheck> }): Promise<Server> {
  const server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? "/").split("?")[0];
      if (req.method === "GET" && path === "/metrics") {
        res.writeHead(200, { "content-type": metricsRegistry.contentType });
        res.end(await metricsRegistry.metrics());
      } else if (req.method === "GET" && path === "/healthz") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ status: "ok" }));
      } else if (req.method === "GET" && path === "/readyz") {
        const report = readiness(options.checks);
        res.writeHead(report.ready ? 200 : 503, { "content-type": "application/json" });
        res.end(JSON.stringify(report));
      } else {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ status: "ERROR", code: "route.not_found", message: "No operation lives at this path." }));
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return server;
}

/** The URL a listening server answers on, e.g. `http://127.0.0.1:9102`. */
export function serverUrl(server: Server): string {
  const { address, family, port } = server.address() as AddressInfo;
  return `http://${family === "IPv6" ? `[${address}]` : address}:${port}`;
}

/** Stops listening and ends idle keep-alive connections (a prober's), which would otherwise hold the close open. */
export function closeOpsServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  server.closeIdleConnections();
  return closed;
}
