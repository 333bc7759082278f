/**
 * `admin bootstrap` and the CLI's passwords on a nats-server with users, as in production:
 * the services run as `services` (the server's no-auth user, so the harness connects as
 * it), and the real CLI process runs as `operator`, a user allowed only to publish
 * `cjs.admin.>` and to subscribe to `_INBOX_admin.>`.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Kvm } from "@nats-io/kv";
import { connect, errors as natsErrors, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import { Business } from "../../shared/contract/index.js";
import { ADMIN_INBOX_PREFIX, BUCKETS, JsonBucket } from "../../shared/nats/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, startSystem, type RunningSystem } from "../harness/system.js";
import { programArgs } from "../harness/programs.js";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const OPERATOR_PASSWORD = `op-${randomBase62(16)}`;
const SERVICES_PASSWORD = `svc-${randomBase62(16)}`;
const AGENT_PASSWORD = `agent-${randomBase62(16)}`;

/**
 * The permission blocks docs/operations.md ("Protecting NATS") gives: the services' as
 * far as these commands need (no jobs or artifacts here), answering on any inbox through
 * `allow_responses`, and the operator's.
 */
const AUTHORIZATION = `
authorization {
  users: [
    {
      user: services, password: "${SERVICES_PASSWORD}",
      permissions: {
        publish: ["cjs.>", "$KV.>", "$JS.API.>", "$JS.ACK.>", "_INBOX.>"],
        subscribe: ["cjs.>", "_INBOX.>"],
        allow_responses: true
      }
    },
    {
      user: operator, password: "${OPERATOR_PASSWORD}",
      permissions: { publish: ["cjs.admin.>"], subscribe: ["${ADMIN_INBOX_PREFIX}.>"] }
    },
    {
      user: agent, password: "${AGENT_PASSWORD}",
      permissions: { publish: ["cjs.nodeplane.>"], subscribe: ["${ADMIN_INBOX_PREFIX}.>"] }
    }
  ]
}
no_auth_user: services
`;

let nats: NatsHarness;
let system: RunningSystem;
let nc: NatsConnection;
let dir: string;

beforeAll(async () => {
  nats = await startNats({ extraConfig: AUTHORIZATION });
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 });
  nc = await connect({ servers: nats.url, name: "test-admin-bootstrap" });
  dir = await mkdtemp(join(tmpdir(), "admin-bootstrap-"));
}, 60_000);

afterAll(async () => {
  await nc?.close();
  await system?.stop();
  await nats?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

const AS_OPERATOR = { NATS_USER: "operator", NATS_PASSWORD: OPERATOR_PASSWORD };

/** The real CLI process, as the operator runs it; `input` is written to its stdin, then stdin ends. */
function admin(
  args: readonly string[],
  options: { env?: Record<string, string>; input?: string } = {},
): Promise<Outcome> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    NATS_URL: nats.url,
    ...AS_OPERATOR,
    ...options.env,
  };
  delete env.NATS_TOKEN;
  delete env.NATS_CREDS_FILE;
  const child = spawn(process.execPath, [...programArgs("services/admin/main.ts"), ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdin.end(options.input ?? "");
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

/** Terminal control sequences (readline redraws the line it edits) taken out. */
const ESCAPE_SEQUENCE = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, "g");
const withoutEscapes = (text: string) => text.replace(ESCAPE_SEQUENCE, "");

const shellQuote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

/**
 * The real CLI on a pseudo-terminal (util-linux `script`): each answer is typed once its
 * prompt has appeared, as a person would. The transcript is everything the terminal showed.
 */
function onTerminal(
  args: readonly string[],
  answers: ReadonlyArray<readonly [prompt: string, typed: string]>,
): Promise<{ code: number | null; transcript: string }> {
  const command = [process.execPath, ...programArgs("services/admin/main.ts"), ...args].map(shellQuote).join(" ");
  const env = { ...process.env, NATS_URL: nats.url, ...AS_OPERATOR };
  const child = spawn("script", ["-qec", command, "/dev/null"], {
    cwd: REPO_ROOT,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let transcript = "";
  let next = 0;
  let seen = 0;
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    transcript += chunk;
    const answer = answers[next];
    if (!answer) return;
    const at = transcript.indexOf(answer[0], seen);
    if (at < 0) return;
    seen = at + answer[0].length;
    next += 1;
    child.stdin.write(`${answer[1]}\r`);
  });
  return new Promise((resolve) =>
    child.once("close", (code) => {
      child.stdin.destroy();
      resolve({ code, transcript });
    }),
  );
}

async function signIn(appId: string, email: string, password: string): Promise<void> {
  const client = new ComputeClient({ baseUrl: system.gateways[0]!.baseUrl, appId });
  const tokens = await client.call("login", { email, password });
  expect(tokens.access_token).toEqual(expect.any(String));
}

async function businessesOf(appId: string): Promise<Business[]> {
  const bucket = new JsonBucket(await new Kvm(nc).open(BUCKETS.businesses), Business);
  const found: Business[] = [];
  for await (const key of await bucket.kv.keys()) {
    const stored = await bucket.get(key);
    if (stored?.value.app_id === appId) found.push(stored.value);
  }
  return found;
}

async function bootstrapFile(appId: string, extra: Record<string, unknown> = {}): Promise<string> {
  const path = join(dir, `${appId}.json`);
  const settings = {
    app_id: appId,
    app_name: "Acme Corp",
    operator_business_name: "Acme Operations",
    admin_email: `ops@${appId}.example`,
    ...extra,
  };
  await writeFile(path, JSON.stringify(settings));
  return path;
}

describe("bootstrap as the restricted operator user", () => {
  const appId = `boot-${randomBase62(6).toLowerCase()}`;
  const password = `pw-${randomBase62(20)}`;

  it("creates the app, an operator business and its admin, who signs in", async () => {
    await writeFile(join(dir, "admin-password"), `${password}\n`, { mode: 0o600 });
    const file = await bootstrapFile(appId, { password_file: "admin-password" });
    const outcome = await admin(["bootstrap", "--file", file, "--json"]);
    expect(outcome.stderr).toBe("");
    expect(outcome.code).toBe(0);
    const made = JSON.parse(outcome.stdout) as {
      app: { app_id: string };
      business: Business;
      admin: { email: string; role: string; business_id: string };
    };
    expect(made.app.app_id).toBe(appId);
    expect(made.business).toMatchObject({ app_id: appId, name: "Acme Operations", operator: true });
    expect(made.admin).toMatchObject({
      email: `ops@${appId}.example`,
      role: "admin",
      business_id: made.business.business_id,
    });
    expect(outcome.stdout).not.toContain(password);
    await signIn(appId, `ops@${appId}.example`, password);
  });

  it("run again, refuses with exit 1 naming the existing application, and makes no second business", async () => {
    const outcome = await admin(["bootstrap", "--file", await bootstrapFile(appId), "--password-stdin"], {
      input: `${password}\n`,
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain(`application ${appId} exists already`);
    expect(outcome.stderr).toContain("nothing was created");
    expect(await businessesOf(appId)).toHaveLength(1);
  });

  it("refuses a password in the bootstrap file before contacting NATS", async () => {
    const outcome = await admin([
      "bootstrap",
      "--file",
      await bootstrapFile(`other-${appId}`, { password: "correct horse battery" }),
    ]);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('"password" is refused');
    expect(await businessesOf(`other-${appId}`)).toEqual([]);
  });
});

describe("user create's password", () => {
  it("is read from the first line of stdin with --password-stdin, and the user signs in with it", async () => {
    const tenant = await createTenant(nc);
    const email = `stdin-${randomBase62(6).toLowerCase()}@example.test`;
    const password = `pw ${randomBase62(16)} with spaces`;
    const args = [
      "user",
      "create",
      "--app",
      tenant.app.app_id,
      "--business",
      tenant.business.business_id,
      "--email",
      email,
      "--password-stdin",
    ];
    const outcome = await admin(args, { input: `${password}\nnot the password\n` });
    expect(outcome.stderr).toBe("");
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain(`<${email}> (member)`);
    await signIn(tenant.app.app_id, email, password);
  });

  it("on the command line is refused with exit 2, and nothing is created", async () => {
    const tenant = await createTenant(nc);
    const email = `argv-${randomBase62(6).toLowerCase()}@example.test`;
    const args = [
      "user",
      "create",
      "--app",
      tenant.app.app_id,
      "--business",
      tenant.business.business_id,
      "--email",
      email,
      "--password",
      "correct horse battery",
    ];
    const outcome = await admin(args);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain("--password is refused");
    expect(outcome.stderr).toContain("--password-stdin");
    const client = new ComputeClient({ baseUrl: system.gateways[0]!.baseUrl, appId: tenant.app.app_id });
    await expect(client.call("login", { email, password: "correct horse battery" })).rejects.toMatchObject({
      code: "auth.login_failed",
    });
  });
});

describe("on a terminal", () => {
  it("user create asks for the password twice without echoing it", async () => {
    const tenant = await createTenant(nc);
    const email = `tty-${randomBase62(6).toLowerCase()}@example.test`;
    const password = `tty-${randomBase62(20)}`;
    const args = [
      "user",
      "create",
      "--app",
      tenant.app.app_id,
      "--business",
      tenant.business.business_id,
      "--email",
      email,
      "--role",
      "admin",
    ];
    const { code, transcript } = await onTerminal(args, [
      ["Password: ", password],
      ["Password again: ", password],
    ]);
    expect(transcript).toContain(`<${email}> (admin)`);
    expect(code).toBe(0);
    expect(transcript).not.toContain(password);
    await signIn(tenant.app.app_id, email, password);
  });

  it("bootstrap asks for every setting and the password", async () => {
    const appId = `tty-${randomBase62(6).toLowerCase()}`;
    const password = `tty-${randomBase62(20)}`;
    const { code, transcript } = await onTerminal(
      ["bootstrap"],
      [
        ["Application id", appId],
        ["Application name: ", "Terminal Corp"],
        ["Operator business name: ", "Terminal Operations"],
        ["Admin e-mail: ", `ops@${appId}.example`],
        ["Password: ", password],
        ["Password again: ", password],
      ],
    );
    expect(transcript).toContain(`created app ${appId} (Terminal Corp)`);
    expect(code).toBe(0);
    // The terminal shows what is typed at a plain prompt, never the password.
    expect(withoutEscapes(transcript)).toContain(`Admin e-mail: ops@${appId}.example`);
    expect(transcript).not.toContain(password);
    expect(await businessesOf(appId)).toEqual([
      expect.objectContaining({ name: "Terminal Operations", operator: true }),
    ]);
    await signIn(appId, `ops@${appId}.example`, password);
  });
});

describe("the operator's NATS user", () => {
  it("cannot read the signing keys bucket nor call the JetStream API", async () => {
    const operator = await connect({
      servers: nats.url,
      user: "operator",
      pass: OPERATOR_PASSWORD,
      inboxPrefix: ADMIN_INBOX_PREFIX,
      reconnect: false,
    });
    try {
      await expect(operator.request("$JS.API.INFO", "", { timeout: 2000 })).rejects.toThrow(
        /Permissions Violation for Publish to "\$JS\.API\.INFO"/,
      );
      const directGet = `$JS.API.DIRECT.GET.KV_${BUCKETS.signingKeys}`;
      await expect(
        operator.request(directGet, JSON.stringify({ last_by_subj: `$KV.${BUCKETS.signingKeys}.current` }), {
          timeout: 2000,
        }),
      ).rejects.toThrow(/Permissions Violation for Publish/);
      const watch = operator.subscribe(`$KV.${BUCKETS.signingKeys}.>`);
      await expect(watch.closed).resolves.toBeInstanceOf(natsErrors.PermissionViolationError);
    } finally {
      await operator.close();
    }
  });

  it("with a wrong password, the CLI says the server refused it as an authorization violation", async () => {
    const outcome = await admin(["app", "create", "--id", "never", "--name", "Never"], {
      env: { NATS_PASSWORD: "wrong" },
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain(
      `NATS at ${nats.url} refused the connection: authorization violation with user operator`,
    );
    expect(outcome.stderr).not.toContain("make dev");
  });

  it("as the services' user, the CLI says NATS refused its answer inbox and that the command may have been carried out", async () => {
    const outcome = await admin(["app", "create", "--id", "svcmade", "--name", "Made"], {
      env: { NATS_USER: "services", NATS_PASSWORD: SERVICES_PASSWORD },
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain(
      `NATS refused user services (NATS_USER and NATS_PASSWORD) the right to subscribe to ${ADMIN_INBOX_PREFIX}.`,
    );
    expect(outcome.stderr).toContain("the command may have been carried out");
    expect(outcome.stderr).not.toContain("did not answer");
    // It was: the gateway made the application and its answer was lost.
    const again = await admin(["app", "create", "--id", "svcmade", "--name", "Made"]);
    expect(again.stderr).toContain("resource.already_exists");
  });

  it("as a user without publish rights on cjs.admin.>, the CLI says the command was not sent", async () => {
    const outcome = await admin(["app", "create", "--id", "agentmade", "--name", "Never"], {
      env: { NATS_USER: "agent", NATS_PASSWORD: AGENT_PASSWORD },
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain(
      "NATS refused user agent (NATS_USER and NATS_PASSWORD) the right to publish to cjs.admin.app.create: the command was not sent.",
    );
    expect(outcome.stderr).toContain("needs publish on cjs.admin.> and subscribe on _INBOX_admin.>");
  });
});
