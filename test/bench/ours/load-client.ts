import { pooledFetch } from "../../../clients/agent/pooled-fetch.js";
import { ComputeClient, type ComputeClientOptions } from "../../../shared/client/index.js";

/**
 * The load generator's connections: the agent's `fetch` over `node:http` (kept-alive), not
 * the global `fetch`. The load generator shares the machine with the services it measures;
 * measured alone, the global `fetch` (undici and web streams) cost it about 0.6 ms of CPU
 * per request here, this about 0.3. What goes on the wire is the same request.
 */
const connections = pooledFetch();

/** A client of the load generator: the SDK-shaped client the tests use, sending over `node:http`. */
export function loadClient(options: Omit<ComputeClientOptions, "fetch">): ComputeClient {
  return new ComputeClient({ ...options, fetch: connections.fetch });
}
