import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { metricsRegistry } from "./metrics.js";
import { readiness, type ReadinessCheck } from "./health.js";

/** Seconds a client is asked to wait before it tries a process that is still starting. */
const STARTING_RETRY_AFTER_SECONDS = 1;

/**
 * The operations endpoints of a process, on its ops port: `/metrics` (Prometheus),
 * `/healthz` (the process is alive), `/readyz` (its checks pass). `metrics: false` leaves
 * `/metrics` out, for a server on a public port (the gateway's API port while it starts).
 * Any other path answers 404 `route.not_found`, or with `starting: true` 503
 * `service.unavailable` with `Retry-After`: the gateway's API port answers so until the
 * API takes it over, so a client retries an operation instead of dropping it.
 */
export async function startOpsServer(options: {
  host: string;
  port: number;
  checks: Record<string, ReadinessCheck>;
  metrics?: boolean;
  starting?: boolean;
}): Promise<Server> {
  const servesMetrics = options.metrics ?? true;
  const server = createServer((req, res) => {
    const send = (status: number, contentType: string, body: string, extra: Record<string, string> = {}) => {
      // Once closing, a connection must not wait for another request: a prober's keep-alive would hold the close open for ever.
      const headers = { "content-type": contentType, ...extra, ...(server.listening ? {} : { connection: "close" }) };
      res.writeHead(status, headers);
      res.end(body);
    };
    void (async () => {
      const path = (req.url ?? "/").split("?")[0];
      if (req.method === "GET" && path === "/metrics" && servesMetrics) {
        send(200, metricsRegistry.contentType, await metricsRegistry.metrics());
      } else if (req.method === "GET" && path === "/healthz") {
        send(200, "application/json", JSON.stringify({ status: "ok" }));
      } else if (req.method === "GET" && path === "/readyz") {
        const report = readiness(options.checks);
        send(report.ready ? 200 : 503, "application/json", JSON.stringify(report));
      } else if (options.starting) {
        // The answer goes at once, whatever of the body is still to come (read and dropped); the connection closes after it.
        req.resume();
        send(
          503,
          "application/json",
          JSON.stringify({
            status: "ERROR",
            code: "service.unavailable",
            message: "The service is starting; try again shortly.",
          }),
          { "retry-after": String(STARTING_RETRY_AFTER_SECONDS), connection: "close" },
        );
      } else {
        send(
          404,
          "application/json",
          JSON.stringify({ status: "ERROR", code: "route.not_found", message: "No operation lives at this path." }),
        );
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

/** Stops listening, ends idle keep-alive connections and lets requests in flight finish, each on a connection that then closes. */
export function closeOpsServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  server.closeIdleConnections();
  return closed;
}
