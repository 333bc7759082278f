import { spawn } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import { buildProgram, runCli } from "../../clients/cli/program.js";
import type { Command } from "commander";
import { newId } from "../../shared/runtime/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { logLines } from "../harness/log-jobs.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";
import { startWebhookReceiver } from "../harness/webhook-receiver.js";
import { CLI_MAIN, CliRunner, type CliOptions, type CliRun } from "../harness/cli.js";
import { programArgs } from "../harness/programs.js";

/**
 * `cjs`, the real binary (clients/cli/main.ts run by node), against the real stack: a
 * login kept in a 0600 file, environment credentials, jobs with --follow and their exit
 * codes, keys, artifacts, nodes, billing, and an interactive login under a pseudo-terminal.
 */
let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let baseUrl: string;
let cli: CliRunner;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 });
  baseUrl = system.gateways[0]!.baseUrl;
  tenant = await createTenant(system.gateways[0]!.nc);
  cli = new CliRunner({ baseUrl, appId: tenant.app.app_id });
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
  cli?.cleanUp();
});

function freshConfigDir(): string {
  return cli.freshConfigDir();
}

function cjs(args: string[], options: CliOptions): Promise<CliRun> {
  return cli.run(args, options);
}

async function loggedIn(): Promise<string> {
  return cli.loggedIn({ email: tenant.user.email, password: tenant.password });
}

describe("signing in", () => {
  it("login --password-stdin keeps the session in a 0600 file; whoami names the user; logout ends it on the service", async () => {
    const configDir = await loggedIn();
    const file = join(configDir, "session.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(configDir).mode & 0o777).toBe(0o700);
    const { refresh_token } = (JSON.parse(readFileSync(file, "utf8")) as { tokens: { refresh_token: string } }).tokens;

    const whoami = await cjs(["whoami", "--json"], { configDir });
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(JSON.parse(whoami.stdout)).toMatchObject({
      email: tenant.user.email,
      user_id: tenant.user.user_id,
      business_id: tenant.business.business_id,
      credential: "session",
    });

    const logout = await cjs(["logout"], { configDir });
    expect(logout.code, logout.stderr).toBe(0);
    expect(() => statSync(file)).toThrow();
    const anonymous = (await signedInClient(baseUrl, tenant)).anonymous;
    await expect(anonymous.call("refresh", { refresh_token })).rejects.toMatchObject({ code: "auth.refresh_invalid" });
  });

  it("a wrong password is refused with the auth exit code and nothing is stored", async () => {
    const configDir = freshConfigDir();
    const login = await cjs(["login", "--email", tenant.user.email, "--password-stdin"], {
      configDir,
      input: "not-the-password\n",
    });
    expect(login.code).toBe(77);
    expect(login.stderr).toContain("auth.login_failed");
    expect(() => statSync(join(configDir, "session.json"))).toThrow();
  });

  it("without a session or a key, a command says how to sign in and exits 64", async () => {
    const run = await cjs(["jobs", "list"], { configDir: freshConfigDir() });
    expect(run.code).toBe(64);
    expect(run.stderr).toContain("cjs login");
  });

  it("an interactive login on a terminal asks for the e-mail and the password, and does not echo the password", async () => {
    const configDir = freshConfigDir();
    const session = await underTerminal(["login"], configDir, [
      { after: "E-mail: ", type: `${tenant.user.email}\r` },
      { after: "Password: ", type: `${tenant.password}\r` },
    ]);
    expect(session.code, session.output).toBe(0);
    expect(session.output).toContain(`as ${tenant.user.email}`);
    expect(session.output).not.toContain(tenant.password);
    expect(JSON.parse(readFileSync(join(configDir, "session.json"), "utf8"))).toMatchObject({
      email: tenant.user.email,
    });
  });
});

describe("jobs with an API key from the environment", () => {
  it("submit --follow prints the log as the node sends it and exits with the job's exit code", async () => {
    const user = (await signedInClient(baseUrl, tenant)).client;
    const { key } = await user.call("createApiKey", { name: "cli" });
    const pool = `cli-${Math.random().toString(36).slice(2, 8)}`;
    const node = await FakeNode.register(user, baseUrl, tenant.app.app_id, { pool_id: pool });

    const following = cjs(["jobs", "submit", "--pool", pool, "--follow", "--", "sh", "-c", "exit 3"], {
      configDir: freshConfigDir(),
      env: { CJS_API_KEY: key },
    });
    const [assignment] = await node.poll(10);
    await node.client.call("pushLogs", { job_id: assignment!.job_id, attempt: 1, lines: logLines(1, 3) });
    await node.client.call("result", { job_id: assignment!.job_id, attempt: 1, outcome: "failed", exit_code: 3 });
    const run = await following;

    expect(run.code, run.stderr).toBe(3);
    expect(run.stdout).toBe("line 1\nline 2\nline 3\n");
    expect(run.stderr).toContain(`${assignment!.job_id} failed (exit code 3)`);
  });

  it("--json prints the answer for scripts; get of an unknown job exits 66", async () => {
    const user = (await signedInClient(baseUrl, tenant)).client;
    const { key } = await user.call("createApiKey", { name: "cli-json" });
    const env = { CJS_API_KEY: key };
    const configDir = freshConfigDir();

    const submitted = await cjs(
      ["--json", "jobs", "submit", "--pool", "cli-nobody", "--label", "team=ml", "--", "echo", "hi"],
      { configDir, env },
    );
    expect(submitted.code, submitted.stderr).toBe(0);
    const { job_id } = JSON.parse(submitted.stdout) as { job_id: string };
    const got = await cjs(["jobs", "get", job_id, "--json"], { configDir, env });
    expect(JSON.parse(got.stdout)).toMatchObject({
      job: { job_id, state: "queued", labels: { team: "ml" }, command: ["echo", "hi"] },
    });

    const missing = await cjs(["jobs", "get", newId("job")], { configDir, env });
    expect(missing.code).toBe(66);
    expect(missing.stderr).toContain("resource.not_found");
  });

  it("jobs submit takes --run-at, --queue-timeout and --retries with its companions", async () => {
    const user = (await signedInClient(baseUrl, tenant)).client;
    const { key } = await user.call("createApiKey", { name: "cli-timing" });
    const env = { CJS_API_KEY: key };
    const configDir = freshConfigDir();
    const runAt = new Date(Date.now() + 86_400_000).toISOString();

    const args = [
      "--run-at",
      runAt,
      "--queue-timeout",
      "600",
      "--retries",
      "2",
      "--retry-on-exit-codes",
      "75,76",
      "--retry-backoff",
      "5",
    ];
    const submitted = await cjs(["--json", "jobs", "submit", "--pool", "cli-nobody", ...args, "--", "true"], {
      configDir,
      env,
    });
    expect(submitted.code, submitted.stderr).toBe(0);
    const { job_id } = JSON.parse(submitted.stdout) as { job_id: string };
    const got = await cjs(["jobs", "get", job_id, "--json"], { configDir, env });
    expect(JSON.parse(got.stdout)).toMatchObject({
      job: {
        run_at: runAt,
        pending_reason: "scheduled",
        queue_timeout_seconds: 600,
        retry: { max_retries: 2, on_exit_codes: [75, 76], backoff: { initial_seconds: 5 } },
      },
    });

    const refused = await cjs(["jobs", "submit", "--retry-backoff", "5", "--", "true"], { configDir, env });
    expect(refused.code).toBe(64);
    expect(refused.stderr).toContain("--retries");
  });
});

describe("dry run and search", () => {
  it("submit --dry-run says what would happen and creates nothing; ls finds jobs by metadata and name prefix", async () => {
    const user = (await signedInClient(baseUrl, tenant)).client;
    const { key } = await user.call("createApiKey", { name: "cli-dry", maxJobsPerHour: 10 });
    const env = { CJS_API_KEY: key };
    const configDir = freshConfigDir();
    const pool = `cli-${Math.random().toString(36).slice(2, 8)}`;

    const dry = await cjs(["jobs", "submit", "--dry-run", "--pool", pool, "--", "echo", "hi"], { configDir, env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("would queue");
    expect(dry.stdout).toContain("would wait   no_nodes_in_pool");
    expect(dry.stdout).toContain("key quota    10 jobs this hour");
    const dryJson = await cjs(["--json", "jobs", "submit", "--dry-run", "--pool", pool, "--", "echo", "hi"], {
      configDir,
      env,
    });
    expect(JSON.parse(dryJson.stdout)).toMatchObject({
      dry_run: true,
      would_queue: true,
      placement: { nodes: [], pending_reason: "no_nodes_in_pool" },
    });
    const none = await cjs(["--json", "jobs", "ls", "--pool", pool], { configDir, env });
    expect(JSON.parse(none.stdout)).toEqual({ items: [] });

    const submitted = await cjs(
      [
        "--json",
        "jobs",
        "submit",
        "--pool",
        pool,
        "--name",
        "report-1",
        "--meta",
        "team=ml",
        "--meta",
        "url=a=b",
        "--",
        "true",
      ],
      { configDir, env },
    );
    const { job_id } = JSON.parse(submitted.stdout) as { job_id: string };
    await cjs(["jobs", "submit", "--pool", pool, "--name", "other", "--meta", "team=ml", "--", "true"], {
      configDir,
      env,
    });
    const found = await cjs(
      [
        "--json",
        "jobs",
        "ls",
        "--pool",
        pool,
        "--metadata",
        "team=ml",
        "--metadata",
        "url=a=b",
        "--name-prefix",
        "report",
      ],
      { configDir, env },
    );
    expect(found.code, found.stderr).toBe(0);
    expect((JSON.parse(found.stdout) as { items: Array<{ job_id: string }> }).items.map((item) => item.job_id)).toEqual(
      [job_id],
    );
  });

  it("submit and retry with --idempotency-key run once: the same command again answers the first's job", async () => {
    const user = (await signedInClient(baseUrl, tenant)).client;
    const { key } = await user.call("createApiKey", { name: "cli-idempotent" });
    const env = { CJS_API_KEY: key };
    const configDir = freshConfigDir();
    const pool = `cli-${Math.random().toString(36).slice(2, 8)}`;
    const node = await FakeNode.register(user, baseUrl, tenant.app.app_id, { pool_id: pool });

    const submit = () =>
      cjs(["jobs", "submit", "--pool", pool, "--idempotency-key", `submit ${pool}`, "--", "false"], { configDir, env });
    const first = await submit();
    expect(first.code, first.stderr).toBe(0);
    expect((await submit()).stdout).toBe(first.stdout);
    const jobId = first.stdout.trim();
    expect((await user.call("listJobs", { pool_id: pool })).items.map((item) => item.job_id)).toEqual([jobId]);

    await expect.poll(async () => (await node.poll(), node.running.size), { timeout: 10_000 }).toBe(1);
    await node.finish(jobId, "failed");
    const retry = () =>
      cjs(["--json", "jobs", "retry", jobId, "--idempotency-key", `retry ${pool}`], { configDir, env });
    const retried = await retry();
    expect(retried.code, retried.stderr).toBe(0);
    expect((await retry()).stdout).toBe(retried.stdout);
    const { job } = await user.call("retrieveJob", { job_id: jobId });
    expect(job.timeline.filter((event) => event.reason === "retried")).toHaveLength(1);
  });
});

describe("keys, artifacts, nodes and billing with a session", () => {
  it("a key made with keys create works until keys revoke, then it is refused (exit 77)", async () => {
    const configDir = await loggedIn();
    const created = await cjs(["keys", "create", "--name", "ci", "--json"], { configDir });
    const { key, key_id } = JSON.parse(created.stdout) as { key: string; key_id: string };
    const listed = await cjs(["keys", "ls"], { configDir });
    expect(listed.stdout).toContain(key_id);

    expect((await cjs(["jobs", "list"], { configDir: freshConfigDir(), env: { CJS_API_KEY: key } })).code).toBe(0);
    expect((await cjs(["keys", "revoke", key_id], { configDir })).code).toBe(0);
    const refused = await cjs(["jobs", "list"], { configDir: freshConfigDir(), env: { CJS_API_KEY: key } });
    expect(refused.code).toBe(77);
    expect(refused.stderr).toContain("auth.invalid_credentials");
  });

  it("a key created with --scopes jobs:read lists jobs but is refused a submit (exit 77, naming the scope)", async () => {
    const configDir = await loggedIn();
    const created = await cjs(["keys", "create", "--name", "reader", "--scopes", "jobs:read"], { configDir });
    expect(created.code, created.stderr).toBe(0);
    const env = { CJS_API_KEY: created.stdout.trim() };

    expect((await cjs(["jobs", "list"], { configDir: freshConfigDir(), env })).code).toBe(0);
    const submit = await cjs(["jobs", "submit", "--", "true"], { configDir: freshConfigDir(), env });
    expect(submit.code).toBe(77);
    expect(submit.stderr).toContain("auth.scope_missing");
    expect(submit.stderr).toContain("jobs:write");
  });

  it("artifacts put then get gives back the same bytes, checked", async () => {
    const configDir = await loggedIn();
    const submitted = await cjs(["--json", "jobs", "submit", "--pool", "cli-nobody", "--", "true"], { configDir });
    const { job_id } = JSON.parse(submitted.stdout) as { job_id: string };
    const work = cli.workDir();
    writeFileSync(join(work, "in.csv"), "a,b\n1,2\n");

    const put = await cjs(["artifacts", "put", job_id, join(work, "in.csv"), "--content-type", "text/csv"], {
      configDir,
    });
    expect(put.code, put.stderr).toBe(0);
    const listed = await cjs(["artifacts", "ls", job_id, "--json"], { configDir });
    expect(JSON.parse(listed.stdout)).toMatchObject({
      items: [{ artifact_id: "in.csv", size_bytes: 8, content_type: "text/csv" }],
    });
    const get = await cjs(["artifacts", "get", job_id, "in.csv", "-o", join(work, "out.csv")], { configDir });
    expect(get.code, get.stderr).toBe(0);
    expect(readFileSync(join(work, "out.csv"), "utf8")).toBe("a,b\n1,2\n");
  });

  it("nodes ls shows a registered node and nodes drain drains it", async () => {
    const configDir = await loggedIn();
    const user = (await signedInClient(baseUrl, tenant)).client;
    const pool = `cli-nodes-${Math.random().toString(36).slice(2, 8)}`;
    const node = await FakeNode.register(user, baseUrl, tenant.app.app_id, { pool_id: pool, name: "cli-node" });

    const listed = await cjs(["nodes", "ls", "--pool", pool], { configDir });
    expect(listed.stdout).toContain(node.nodeId);
    expect((await cjs(["nodes", "drain", node.nodeId], { configDir })).code).toBe(0);
    const after = await cjs(["nodes", "ls", "--pool", pool, "--json"], { configDir });
    expect(JSON.parse(after.stdout)).toMatchObject({ items: [{ node_id: node.nodeId, state: "draining" }] });
  });

  it("billing plans and subscription answer in JSON", async () => {
    const configDir = await loggedIn();
    const plans = await cjs(["billing", "plans", "--json"], { configDir });
    expect(JSON.parse(plans.stdout)).toMatchObject({ default_plan_id: expect.any(String), plans: expect.any(Array) });
    const subscription = await cjs(["billing", "subscription", "--json"], { configDir });
    expect(JSON.parse(subscription.stdout)).toMatchObject({ business_id: tenant.business.business_id });
  });
});

describe("accounts, users, deletion and exports", () => {
  it("account password reads the current and new password from stdin, and the new one signs in", async () => {
    const own = await createTenant(system.gateways[0]!.nc);
    const configDir = freshConfigDir();
    const env = { CJS_APP_ID: own.app.app_id };
    expect(
      (
        await cjs(["login", "--email", own.user.email, "--password-stdin"], {
          configDir,
          env,
          input: `${own.password}\n`,
        })
      ).code,
    ).toBe(0);
    const newPassword = `new-${own.password}`;

    const changed = await cjs(["account", "password"], { configDir, env, input: `${own.password}\n${newPassword}\n` });
    expect(changed.code, changed.stderr).toBe(0);
    expect(
      (
        await cjs(["login", "--email", own.user.email, "--password-stdin"], {
          configDir: freshConfigDir(),
          env,
          input: `${own.password}\n`,
        })
      ).code,
    ).toBe(77);
    expect(
      (
        await cjs(["login", "--email", own.user.email, "--password-stdin"], {
          configDir: freshConfigDir(),
          env,
          input: `${newPassword}\n`,
        })
      ).code,
    ).toBe(0);
  });

  it("users invite, ls, disable and set-role manage the business's users", async () => {
    const configDir = await loggedIn();
    const email = `invitee-${Math.random().toString(36).slice(2, 8)}@example.test`;
    const invited = await cjs(["users", "invite", email, "--json"], { configDir });
    expect(invited.code, invited.stderr).toBe(0);
    const { user_id } = JSON.parse(invited.stdout) as { user_id: string };

    expect((await cjs(["users", "set-role", user_id, "admin"], { configDir })).code).toBe(0);
    expect((await cjs(["users", "disable", user_id], { configDir })).code).toBe(0);
    const listed = JSON.parse((await cjs(["users", "ls", "--json"], { configDir })).stdout) as {
      items: Array<{ user_id: string; status: string; role: string }>;
    };
    expect(listed.items.find((user) => user.user_id === user_id)).toMatchObject({ status: "disabled", role: "admin" });
  });

  it("jobs rm deletes a finished job and artifacts rm an artifact; an unfinished job is refused with exit 65", async () => {
    const configDir = await loggedIn();
    const user = (await signedInClient(baseUrl, tenant)).client;
    const pool = `cli-rm-${Math.random().toString(36).slice(2, 8)}`;
    const node = await FakeNode.register(user, baseUrl, tenant.app.app_id, { pool_id: pool });
    const { job_id } = JSON.parse(
      (await cjs(["--json", "jobs", "submit", "--pool", pool, "--", "true"], { configDir })).stdout,
    ) as { job_id: string };
    const work = cli.workDir();
    writeFileSync(join(work, "a.txt"), "a");
    expect((await cjs(["artifacts", "put", job_id, join(work, "a.txt")], { configDir })).code).toBe(0);

    const early = await cjs(["jobs", "rm", job_id], { configDir });
    expect(early.code).toBe(65);
    expect(early.stderr).toContain("state.conflict");
    expect((await cjs(["artifacts", "rm", job_id, "a.txt"], { configDir })).code).toBe(0);
    expect(JSON.parse((await cjs(["artifacts", "ls", job_id, "--json"], { configDir })).stdout)).toEqual({ items: [] });
    await node.poll(10);
    await node.finish(job_id);
    expect((await cjs(["jobs", "rm", job_id], { configDir })).code).toBe(0);
    expect((await cjs(["jobs", "get", job_id], { configDir })).code).toBe(66);
  });

  it("jobs export and billing export stream files; billing cancel of the default plan is refused with exit 65", async () => {
    const configDir = await loggedIn();
    await cjs(["jobs", "submit", "--pool", "cli-export", "--label", "export=yes", "--", "true"], { configDir });
    const ndjson = await cjs(["jobs", "export", "--format", "ndjson", "--label", "export=yes"], { configDir });
    expect(ndjson.code, ndjson.stderr).toBe(0);
    const rows = ndjson.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { labels: Record<string, string> });
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((row) => row.labels.export === "yes")).toBe(true);

    const work = cli.workDir();
    const ledger = await cjs(["billing", "export", "--format", "csv", "-o", join(work, "ledger.csv")], { configDir });
    expect(ledger.code, ledger.stderr).toBe(0);
    expect(readFileSync(join(work, "ledger.csv"), "utf8").split("\n")[0]).toContain("entry_id");

    const cancel = await cjs(["billing", "cancel"], { configDir });
    expect(cancel.code).toBe(65);
    expect(cancel.stderr).toContain("state.conflict");
  });
});

describe("webhooks", () => {
  it("create prints the secret once, ls never; test delivers a webhook.test that deliveries shows; resend sends it again; rm removes it", async () => {
    const configDir = await loggedIn();
    const receiver = await startWebhookReceiver();
    try {
      const created = await cjs(["webhooks", "create", receiver.url, "--events", "job.succeeded,job.failed"], {
        configDir,
      });
      expect(created.code, created.stderr).toBe(0);
      const secret = created.stdout.trim();
      expect(secret).toMatch(/^whsec_/);
      const listed = await cjs(["--json", "webhooks", "ls"], { configDir });
      expect(listed.stdout).not.toContain(secret);
      const webhook = (
        JSON.parse(listed.stdout) as { items: Array<{ webhook_id: string; url: string; events: string[] }> }
      ).items.find((item) => item.url === receiver.url);
      expect(webhook?.events).toEqual(["job.succeeded", "job.failed"]);

      const tested = await cjs(["--json", "webhooks", "test", webhook!.webhook_id], { configDir });
      const { delivery_id } = JSON.parse(tested.stdout) as { delivery_id: string };
      await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBe(1);
      await expect
        .poll(async () => (await cjs(["webhooks", "deliveries", webhook!.webhook_id], { configDir })).stdout, {
          timeout: 15_000,
        })
        .toMatch(new RegExp(`${delivery_id}\\s+webhook\\.test\\s+succeeded\\s.*\\s200\\s`));

      const resent = await cjs(["webhooks", "resend", webhook!.webhook_id, delivery_id], { configDir });
      expect(resent.code, resent.stderr).toBe(0);
      expect(resent.stdout).toContain(`${delivery_id} queued again`);
      await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBe(2);
      expect(receiver.received[1]!.headers["cjs-delivery-id"]).toBe(delivery_id);

      expect((await cjs(["webhooks", "rm", webhook!.webhook_id], { configDir })).code).toBe(0);
      expect((await cjs(["webhooks", "ls"], { configDir })).stdout).not.toContain(webhook!.webhook_id);
    } finally {
      await receiver.close();
    }
  });
});

describe("schedules", () => {
  it("schedules create, ls, get, pause, resume and rm manage a schedule; a bad expression is refused naming the field", async () => {
    const configDir = await loggedIn();
    const created = await cjs(
      [
        "schedules",
        "create",
        "--cron",
        "0 4 * * *",
        "--timezone",
        "Europe/Berlin",
        "--overlap",
        "queue",
        "--name",
        "cli-nightly",
        "--pool",
        "cli-schedules",
        "--json",
        "--",
        "echo",
        "hi",
      ],
      { configDir },
    );
    expect(created.code, created.stderr).toBe(0);
    const { schedule } = JSON.parse(created.stdout) as { schedule: { schedule_id: string } };
    expect(schedule).toMatchObject({
      cron: "0 4 * * *",
      timezone: "Europe/Berlin",
      overlap: "queue",
      name: "cli-nightly",
      state: "active",
      job: { command: ["echo", "hi"], pool_id: "cli-schedules", type: "shell" },
    });

    expect((await cjs(["schedules", "ls"], { configDir })).stdout).toContain(schedule.schedule_id);
    expect((await cjs(["schedules", "pause", schedule.schedule_id], { configDir })).stdout).toContain(
      `${schedule.schedule_id} paused`,
    );
    const got = await cjs(["schedules", "get", schedule.schedule_id, "--json"], { configDir });
    expect(JSON.parse(got.stdout)).toMatchObject({ schedule: { state: "paused", next_run_at: null } });
    expect((await cjs(["schedules", "resume", schedule.schedule_id], { configDir })).stdout).toContain(
      `${schedule.schedule_id} active`,
    );
    expect((await cjs(["schedules", "rm", schedule.schedule_id], { configDir })).code).toBe(0);
    expect((await cjs(["schedules", "get", schedule.schedule_id], { configDir })).code).toBe(66);

    const refused = await cjs(["schedules", "create", "--cron", "whenever", "--", "true"], { configDir });
    expect(refused.code).toBe(65);
    expect(refused.stderr).toContain("request.invalid");
    expect(refused.stderr).toContain("cron:");
  });
});

describe("the command tree", () => {
  it("every command answers --help (exit 0) and the bash completion names every command", async () => {
    const program = buildProgram(
      { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: {} },
      () => undefined,
    );
    const paths = commandPaths(program);
    expect(paths).toContain("jobs submit");
    const completion = await cjs(["completion", "bash"], { configDir: freshConfigDir() });
    for (const path of paths) {
      // In process (the same runCli the binary runs): a spawn per command would cost a second each.
      const help = await helpOf(path);
      expect(help.code, path).toBe(0);
      expect(help.stdout, path).toContain(`Usage: cjs ${path}`);
      expect(completion.stdout).toContain(`|${path}|`);
    }
  });
});

async function helpOf(path: string): Promise<{ code: number; stdout: string }> {
  let stdout = "";
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      stdout += chunk.toString();
      done();
    },
  });
  const code = await runCli([...path.split(" "), "--help"], {
    stdout: sink,
    stderr: sink,
    stdin: process.stdin,
    env: {},
  });
  return { code, stdout };
}

function commandPaths(command: Command, prefix = ""): string[] {
  return command.commands
    .filter((sub) => sub.name() !== "help")
    .flatMap((sub) => {
      const path = prefix === "" ? sub.name() : `${prefix} ${sub.name()}`;
      return [path, ...commandPaths(sub, path)];
    });
}

/**
 * Runs `cjs args…` on a pseudo-terminal (util-linux `script`), typing each answer once its
 * prompt has appeared; answers the exit code and everything the terminal showed.
 */
function underTerminal(
  args: string[],
  configDir: string,
  script: Array<{ after: string; type: string }>,
): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, ...programArgs(CLI_MAIN), ...args]
    .map((part) => `'${part.replaceAll("'", "'\\''")}'`)
    .join(" ");
  return new Promise((resolve, reject) => {
    const child = spawn("script", ["-qec", command, "/dev/null"], { env: cli.env(configDir) });
    let output = "";
    let step = 0;
    let searchFrom = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const next = script[step];
      if (next === undefined) return;
      const at = output.indexOf(next.after, searchFrom);
      if (at === -1) return;
      searchFrom = at + next.after.length;
      step += 1;
      child.stdin.write(next.type);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}
