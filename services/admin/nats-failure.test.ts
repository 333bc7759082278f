import { errors as natsErrors } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { describeConnectFailure, describePermissionFailure } from "./nats-failure.js";

const LOCAL = { url: "nats://127.0.0.1:4222", local: true };
const PRODUCTION = { url: "nats://n1.internal:4222,nats://n2.internal:4222", local: false };
const refused = new natsErrors.ConnectionError("connection refused", {
  cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
});

describe("describeConnectFailure", () => {
  it("names the URL, the reason and the settings, and `make dev` only for its server", () => {
    const local = describeConnectFailure(refused, LOCAL, {}, 3000);
    expect(local).toBe(
      `cannot reach NATS at ${LOCAL.url}: connection refused (ECONNREFUSED). The server is --nats, else NATS_URL, else nats://127.0.0.1:$CJS_NATS_PORT (4222 by default). This is make dev's: is \`make dev\` running, with the same CJS_NATS_PORT?`,
    );
    const production = describeConnectFailure(refused, PRODUCTION, {}, 3000);
    expect(production).toContain(`cannot reach NATS at ${PRODUCTION.url}: connection refused (ECONNREFUSED)`);
    expect(production).not.toContain("make dev");
  });

  it("says a timeout is one", () => {
    expect(describeConnectFailure(new natsErrors.TimeoutError(), PRODUCTION, {}, 3000)).toContain(
      ": no answer within 3 s.",
    );
  });

  it("says an authorization failure is one and names the credential presented, never a secret", () => {
    const refusedAuth = new natsErrors.AuthorizationError("Authorization Violation");
    const asUser = describeConnectFailure(
      refusedAuth,
      PRODUCTION,
      { NATS_USER: "operator", NATS_PASSWORD: "s3cret-password" },
      3000,
    );
    expect(asUser).toContain(
      `NATS at ${PRODUCTION.url} refused the connection: authorization violation with user operator (NATS_USER and NATS_PASSWORD)`,
    );
    expect(asUser).not.toContain("s3cret-password");
    const withToken = describeConnectFailure(refusedAuth, LOCAL, { NATS_TOKEN: "t0ken" }, 3000);
    expect(withToken).toContain("authorization violation with the token in NATS_TOKEN.");
    expect(withToken).not.toContain("t0ken");
    expect(withToken).not.toContain("make dev");
    expect(describeConnectFailure(refusedAuth, LOCAL, {}, 3000)).toContain(
      "no credentials (none of NATS_CREDS_FILE, NATS_TOKEN, NATS_USER is set)",
    );
  });
});

describe("describePermissionFailure", () => {
  const asServices = { NATS_USER: "services", NATS_PASSWORD: "s3cret-password" };

  it("says a refused publish sent nothing, and names the rights the CLI needs", () => {
    const refusedPublish = new natsErrors.PermissionViolationError(
      "Permissions Violation",
      "publish",
      "cjs.admin.app.create",
    );
    const text = describePermissionFailure(refusedPublish, asServices);
    expect(text).toBe(
      "NATS refused user services (NATS_USER and NATS_PASSWORD) the right to publish to cjs.admin.app.create: the command was not sent. " +
        'The CLI\'s NATS user needs publish on cjs.admin.> and subscribe on _INBOX_admin.> (docs/operations.md, "Protecting NATS").',
    );
    expect(text).not.toContain("s3cret-password");
  });

  it("says a refused inbox may have let the command through without its answer", () => {
    const refusedInbox = new natsErrors.PermissionViolationError(
      "Permissions Violation",
      "subscription",
      "_INBOX_admin.abc.*",
    );
    expect(describePermissionFailure(refusedInbox, asServices)).toContain(
      "the right to subscribe to _INBOX_admin.abc.*: the command may have been carried out, but its answer cannot reach the CLI.",
    );
  });
});
