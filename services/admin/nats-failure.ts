import { errors as natsErrors, type NatsConnection } from "@nats-io/transport-node";
import type { NatsCredentials } from "../../shared/nats/index.js";

/** Which credential the CLI presented, as the operator set it. */
function credentialInUse(env: NatsCredentials): string {
  if (env.NATS_CREDS_FILE) return `the credentials file NATS_CREDS_FILE=${env.NATS_CREDS_FILE}`;
  if (env.NATS_TOKEN) return "the token in NATS_TOKEN";
  if (env.NATS_USER) return `user ${env.NATS_USER} (NATS_USER and NATS_PASSWORD)`;
  return "no credentials (none of NATS_CREDS_FILE, NATS_TOKEN, NATS_USER is set)";
}

function reasonOf(error: unknown, timeoutMs: number): string {
  if (error instanceof natsErrors.TimeoutError) return `no answer within ${timeoutMs / 1000} s`;
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  const code = typeof cause?.code === "string" ? ` (${cause.code})` : "";
  return `${error instanceof Error ? error.message : String(error)}${code}`;
}

/**
 * The one message for a CLI that could not connect: the URL, the reason, and the settings
 * that choose them; `make dev` is named only when the URL is its server (`local`). An
 * authorization failure says so and names the credential presented.
 */
export function describeConnectFailure(
  error: unknown,
  nats: { url: string; local: boolean },
  env: NatsCredentials,
  timeoutMs: number,
): string {
  const { url } = nats;
  if (error instanceof natsErrors.AuthorizationError) {
    return (
      `NATS at ${url} refused the connection: authorization violation with ${credentialInUse(env)}. ` +
      "Check NATS_USER and NATS_PASSWORD, NATS_TOKEN or NATS_CREDS_FILE against the server's users."
    );
  }
  const lines = [
    `cannot reach NATS at ${url}: ${reasonOf(error, timeoutMs)}. The server is --nats, else NATS_URL, else nats://127.0.0.1:$CJS_NATS_PORT (4222 by default).`,
  ];
  if (nats.local) lines.push("This is make dev's: is `make dev` running, with the same CJS_NATS_PORT?");
  return lines.join(" ");
}

type PermissionViolation = InstanceType<typeof natsErrors.PermissionViolationError>;

/**
 * The message for a command NATS refused to carry for the CLI's user. A refused publish
 * sent nothing; a refused inbox subscription means the command may have been carried out
 * with its answer lost, so a retry can meet the record it made.
 */
export function describePermissionFailure(violation: PermissionViolation, env: NatsCredentials): string {
  const outcome =
    violation.operation === "publish"
      ? "the command was not sent"
      : "the command may have been carried out, but its answer cannot reach the CLI";
  return (
    `NATS refused ${credentialInUse(env)} the right to ${violation.operation === "publish" ? "publish to" : "subscribe to"} ${violation.subject}: ${outcome}. ` +
    'The CLI\'s NATS user needs publish on cjs.admin.> and subscribe on _INBOX_admin.> (docs/operations.md, "Protecting NATS").'
  );
}

/** Collects the permission violations the server reports on `nc`; `first()` is the earliest seen, if any. */
export function watchPermissionViolations(nc: NatsConnection): { first(): PermissionViolation | undefined } {
  const seen: PermissionViolation[] = [];
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "error" && status.error instanceof natsErrors.PermissionViolationError)
        seen.push(status.error);
    }
  })();
  return { first: () => seen[0] };
}

/** The permission violation behind a failed command: the request's own (a refused publish), else one the connection reported. */
export function permissionViolationOf(
  error: unknown,
  watched: { first(): PermissionViolation | undefined },
): PermissionViolation | undefined {
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause instanceof natsErrors.PermissionViolationError ? cause : watched.first();
}
