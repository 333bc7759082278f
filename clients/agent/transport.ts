import type { AgentConfig } from "./config.js";
import { natsLink, natsNodePlane } from "./nats-node-plane.js";
import { httpNodePlane, type NodePlane } from "./node-plane.js";
import { pooledFetch } from "./pooled-fetch.js";

/** How the agent reaches the service: the gateway's HTTP API, or NATS (NATS-direct mode). */
export interface Transport {
  readonly kind: "http" | "nats";
  /** The node plane for an application, not yet acting as a node. */
  plane(appId: string): NodePlane;
  /** Closes every connection the transport opened. */
  close(): Promise<void>;
}

/**
 * The transport the settings choose: NATS when `CJS_AGENT_NATS_URL` is set, else HTTP
 * through the agent's own connection pool (or `fetch`, when a test gives one).
 */
export function openTransport(config: Readonly<AgentConfig>, fetch?: typeof globalThis.fetch): Transport {
  const natsUrl = config.CJS_AGENT_NATS_URL;
  if (natsUrl !== undefined) {
    const link = natsLink({
      url: natsUrl,
      credentials: config,
      inboxPrefix: config.CJS_AGENT_NATS_INBOX_PREFIX,
      name: `cjs-agent ${config.CJS_NODE_NAME}`,
    });
    return { kind: "nats", plane: (appId) => natsNodePlane({ link, appId }), close: () => link.close() };
  }
  const pool = fetch ? undefined : pooledFetch();
  const send = fetch ?? pool!.fetch;
  return {
    kind: "http",
    plane: (appId) => httpNodePlane({ gatewayUrl: config.CJS_GATEWAY_URL, appId, fetch: send }),
    close: async () => pool?.close(),
  };
}
