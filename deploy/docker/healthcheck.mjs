/* global process, fetch, AbortSignal -- Node.js globals; this file runs in the image as plain JavaScript. */
import { pathToFileURL } from "node:url";

// The image's HEALTHCHECK: GET /healthz on the ops port of the service this container runs.
// The defaults are the services' CJS_OPS_PORT defaults (a test keeps them equal).
export const DEFAULT_OPS_PORTS = {
  gateway: 9100,
  scheduler: 9101,
  "node-registry": 9102,
  "log-relay": 9103,
  billing: 9104,
  webhooks: 9105,
};

async function main() {
  const service = process.env.SERVICE ?? "";
  const defaultPort = DEFAULT_OPS_PORTS[service];
  // The agent and the operator CLI serve no HTTP: their health is their process being up.
  if (defaultPort === undefined) return 0;
  const port = process.env.CJS_OPS_PORT || String(defaultPort);
  try {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) });
    return response.ok ? 0 : 1;
  } catch {
    return 1;
  }
}

// Run as the HEALTHCHECK command; imported by the tests for DEFAULT_OPS_PORTS alone.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main();
