import { join } from "node:path";
import type { ClusterState } from "./state.js";

/** What `make cluster` prints once everything is ready (also kept as `<state dir>/cluster.txt`). */
export function clusterBanner(state: ClusterState, dir: string): string {
  const body = JSON.stringify({ email: state.email, password: state.password });
  const count = (kind: string) => state.processes.filter((record) => record.kind === kind).length;
  return [
    "",
    "The local cluster is running.",
    "",
    `  load balancer  ${state.lb_url}   (haproxy, in front of ${state.processes.filter((record) => record.name.startsWith("gateway-")).length} gateways)`,
    `  app id         ${state.app_id}   (send it as the X-App-ID header)`,
    `  admin          ${state.email}   (business ${state.business_id})`,
    `  password       ${state.password}`,
    `  nats           ${state.nats_urls.join(",")}   (3 nodes, R3 streams)`,
    `  processes      ${state.processes.length}: ${count("nats")} nats-servers, ${count("service")} service replicas, 1 load balancer, ${count("agent")} agents`,
    `  logs           ${join(dir, "logs")}/<process>.log`,
    "",
    "Sign in:",
    `  curl -s -X POST ${state.lb_url}/api/auth/LOGIN_EMAIL -H 'X-App-ID: ${state.app_id}' -H 'Content-Type: application/json' -d '${body}'`,
    "",
    "`make chaos` runs the soak against it; `make cluster-stop` stops it (data stays for the next start).",
    "",
  ].join("\n");
}
