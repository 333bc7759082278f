/** The load balancer in front of the gateways: HAProxy's configuration for `make cluster`. */
export interface HaproxyOptions {
  host: string;
  port: number;
  gateways: readonly { name: string; host: string; port: number }[];
}

/**
 * Round robin over the gateways that answer `/readyz` 200, checked every second: a gateway
 * is out after two failed checks and back after one good one. Only a request that never
 * reached a gateway (connection refused) is retried on the other one, so a submit is never
 * sent twice. Log streams (SSE) may stay open for an hour. A client address holds at most
 * CONNECTIONS_PER_SOURCE connections: the gateways' own per-address budget sees only the balancer.
 */
/** The budget the gateways keep when clients reach them directly (CJS_HTTP_MAX_CONNECTIONS_PER_IP's default). */
export const CONNECTIONS_PER_SOURCE = 256;

export function haproxyConfig(options: HaproxyOptions): string {
  if (options.gateways.length === 0) throw new Error("the load balancer needs at least one gateway");
  const lines = [
    "global",
    "  maxconn 2048",
    // State changes of the gateways (down, up) are notices; requests are not logged.
    "  log stdout format raw local0 notice",
    "",
    "defaults",
    "  mode http",
    "  log global",
    "  timeout connect 2s",
    "  timeout client 65s",
    "  timeout server 65s",
    "  timeout tunnel 1h",
    "  retries 3",
    "  option redispatch",
    "",
    "frontend api",
    `  bind ${options.host}:${options.port}`,
    "  stick-table type ip size 100k store conn_cur",
    "  tcp-request connection track-sc0 src",
    `  tcp-request connection reject if { sc0_conn_cur gt ${CONNECTIONS_PER_SOURCE} }`,
    "  default_backend gateways",
    "",
    "backend gateways",
    "  balance roundrobin",
    "  option httpchk GET /readyz",
    "  http-check expect status 200",
    "  default-server inter 1s fall 2 rise 1",
    ...options.gateways.map((gateway) => `  server ${gateway.name} ${gateway.host}:${gateway.port} check`),
  ];
  return `${lines.join("\n")}\n`;
}
