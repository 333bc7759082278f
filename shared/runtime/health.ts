import type { NatsConnection } from "@nats-io/transport-node";

/** What `/readyz` reports: every check by name, and whether all pass. */
export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, boolean>;
}

export type ReadinessCheck = () => boolean;

/** The NATS connection is up (not closed, not in the middle of reconnecting). */
export function natsConnected(nc: NatsConnection): ReadinessCheck {
  let connected = true;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect") connected = false;
      if (status.type === "reconnect") connected = true;
    }
  })();
  return () => connected && !nc.isClosed();
}

export function readiness(checks: Record<string, ReadinessCheck>): ReadinessReport {
  const results = Object.fromEntries(Object.entries(checks).map(([name, check]) => [name, check()]));
  return { ready: Object.values(results).every(Boolean), checks: results };
}
