import type { DevLogin } from "./bootstrap.js";

/** The local agent as the banner shows it: its node, or why it is not running. */
export type AgentLine = { nodeId: string; pool: string; slots: number } | { error: string };

/** The lines a newcomer needs after `make dev`: where, who, and a first call to paste. */
export function printBanner(options: {
  gatewayUrl: string;
  opsUrl: string;
  natsUrl: string;
  storeDir: string | undefined;
  login: DevLogin;
  agent: AgentLine;
  paymentProvider?: string;
}): void {
  const { gatewayUrl, opsUrl, natsUrl, storeDir, login, agent, paymentProvider } = options;
  const url = gatewayUrl.replace("://127.0.0.1", "://localhost");
  const body = JSON.stringify({ email: login.email, password: login.password });
  const lines = [
    "",
    "Compute Job Service is running.",
    "",
    `  portal     ${url}/?app=${encodeURIComponent(login.appId)}   (sign in with the admin below)`,
    `  api docs   ${url}/docs`,
    `  gateway    ${url}`,
    `  app id     ${login.appId}   (send it as the X-App-ID header)`,
    `  admin      ${login.email}   (business ${login.businessId})`,
    `  password   ${login.password}   (kept in the data dir${login.generated ? "; generated on first start" : ""})`,
    ...(login.warning ? [`  warning    ${login.warning}`] : []),
    `  metrics    ${opsUrl.replace("://127.0.0.1", "://localhost")}/metrics   (every service of this process; /healthz, /readyz too)`,
    `  nats       ${natsUrl}${storeDir ? `   (store: ${storeDir})` : ""}`,
    "error" in agent
      ? `  agent      not running: ${agent.error}`
      : `  agent      node ${agent.nodeId} (pool ${agent.pool}, ${agent.slots} slot${agent.slots === 1 ? "" : "s"})`,
    ...(paymentProvider
      ? [
          `  billing    ${paymentProvider === "sandbox" ? "sandbox payment provider (checkouts run locally; no money moves)" : `${paymentProvider} payment provider`}`,
        ]
      : []),
    "",
    "Sign in:",
    `  curl -s -X POST ${url}/api/auth/LOGIN_EMAIL -H 'X-App-ID: ${login.appId}' -H 'Content-Type: application/json' -d '${body}'`,
    "",
    "One-time sign-in codes are printed here as [dev outbox] lines. Ctrl-C stops everything; data stays for the next start.",
    "",
  ];
  process.stdout.write(lines.join("\n"));
}
