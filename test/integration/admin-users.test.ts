/**
 * `admin users …`: the real CLI process as the operator's NATS user (publish `cjs.admin.>`
 * only, replies on `_INBOX_admin.>`), against a gateway on the same server.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import { ADMIN_INBOX_PREFIX } from "../../shared/nats/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";
import { errorCodeOf } from "../harness/error-code.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startGateway, type RunningGateway, type Tenant } from "../harness/system.js";
import { programArgs } from "../harness/programs.js";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const OPERATOR_PASSWORD = `op-${randomBase62(16)}`;

/** The services as the no-auth user (the harness connects so), and the operator as in docs/operations.md. */
const AUTHORIZATION = `
authorization {
  users: [
    { user: services, password: "svc-${randomBase62(16)}" },
    { user: operator, password: "${OPERATOR_PASSWORD}", permissions: { publish: ["cjs.admin.>"], subscribe: ["${ADMIN_INBOX_PREFIX}.>"] } }
  ]
}
no_auth_user: services
`;

let nats: NatsHarness;
let gateway: RunningGateway;
let tenant: Tenant;

beforeAll(async () => {
  nats = await startNats({ extraConfig: AUTHORIZATION });
  gateway = await startGateway(nats.url);
  tenant = await createTenant(gateway.nc);
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await nats?.stop();
});

/** The real CLI process, as the operator runs it; `server` is the NATS settings (NATS_URL by default). */
function admin(
  args: readonly string[],
  server: Record<string, string> = { NATS_URL: nats.url },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...server,
    NATS_USER: "operator",
    NATS_PASSWORD: OPERATOR_PASSWORD,
  };
  delete env.NATS_TOKEN;
  delete env.NATS_CREDS_FILE;
  if (server.NATS_URL === undefined) delete env.NATS_URL;
  const child = spawn(process.execPath, [...programArgs("services/admin/main.ts"), ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

describe("the NATS server", () => {
  it("is make dev's when only CJS_NATS_PORT says where, as make dev reads it", async () => {
    const port = new URL(nats.url).port;
    const listed = await admin(["users", "list", "--app", tenant.app.app_id], { CJS_NATS_PORT: port });
    expect(listed, listed.stderr).toMatchObject({ code: 0 });
    expect(listed.stdout).toContain(tenant.user.user_id);
  });
});

describe("admin users", () => {
  it("lists a business's users as text, one line each", async () => {
    const listed = await admin([
      "users",
      "list",
      "--app",
      tenant.app.app_id,
      "--business",
      tenant.business.business_id,
    ]);
    expect(listed).toMatchObject({ code: 0, stderr: "" });
    expect(listed.stdout.trim()).toBe(
      `${tenant.user.user_id} <${tenant.user.email}> admin active in business ${tenant.business.business_id} (never signed in)`,
    );
  });

  it("disables the business's last admin (the operator may), refused on the gateway at once, and enables them again", async () => {
    const { client } = await signedInClient(gateway.baseUrl, tenant);
    const disabled = await admin([
      "users",
      "disable",
      "--app",
      tenant.app.app_id,
      "--user",
      tenant.user.user_id,
      "--json",
    ]);
    expect(disabled.code).toBe(0);
    expect(JSON.parse(disabled.stdout)).toMatchObject({
      user_id: tenant.user.user_id,
      status: "disabled",
      role: "admin",
    });
    await expect
      .poll(() => errorCodeOf(client.call("listApiKeys", {})), { timeout: 5000 })
      .toBe("auth.invalid_credentials");

    const enabled = await admin(["users", "enable", "--app", tenant.app.app_id, "--user", tenant.user.user_id]);
    expect(enabled).toMatchObject({ code: 0, stderr: "" });
    expect(enabled.stdout).toContain(`enabled ${tenant.user.user_id} <${tenant.user.email}> admin active`);
    const anonymous = new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id });
    await expect(
      anonymous.call("login", { email: tenant.user.email, password: tenant.password }),
    ).resolves.toBeDefined();
  });

  it("set-role of a user of another app answers not found with exit 1 and changes nothing", async () => {
    const other = await createTenant(gateway.nc);
    const refused = await admin([
      "users",
      "set-role",
      "--app",
      tenant.app.app_id,
      "--user",
      other.user.user_id,
      "--role",
      "member",
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("error: resource.not_found:");
    const { client } = await signedInClient(gateway.baseUrl, other);
    await expect(client.call("listUsers", {})).resolves.toMatchObject({
      items: [expect.objectContaining({ role: "admin" })],
    });
  });
});
