import { existsSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../clients/cli/program.js";
import { CliRunner } from "../harness/cli.js";
import type { ComputeClient } from "../harness/client.js";
import { freePort } from "../harness/free-port.js";
import { logLines, runningJobWithLogs } from "../harness/log-jobs.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import {
  createTenant,
  signedInClient,
  startGateway,
  startSystem,
  type RunningSystem,
  type Tenant,
} from "../harness/system.js";

/**
 * What `cjs` says when something is wrong: a URL that is none, a service that is not
 * there or stops (the URL and the cause, each retry told, the session kept), a log stream
 * whose gateway goes away (reconnecting, and to what), values outside a flag's choices,
 * ids that are not ids, and `--version`.
 */
let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let baseUrl: string;
let user: ComputeClient;
let cli: CliRunner;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 });
  baseUrl = system.gateways[0]!.baseUrl;
  tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(baseUrl, tenant));
  cli = new CliRunner({ baseUrl, appId: tenant.app.app_id });
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
  cli?.cleanUp();
});

/** `cjs args…` in this process (the runCli the binary runs), for what needs no service. */
async function inProcess(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const sink = () => {
    const out = { text: "" };
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        out.text += chunk.toString();
        done();
      },
    });
    return { out, stream };
  };
  const stdout = sink();
  const stderr = sink();
  const code = await runCli(args, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    stdin: process.stdin,
    env: { NO_COLOR: "1", CJS_API_KEY: "cjs_not-used", CJS_CONFIG_DIR: cli.freshConfigDir() },
  });
  return { code, stdout: stdout.out.text, stderr: stderr.out.text };
}

describe("where cjs calls", () => {
  it("a --url that is not an http(s) URL is a usage error (64), before any request", async () => {
    for (const url of ["notaurl", "ftp://files.example"]) {
      const run = await inProcess(["--url", url, "jobs", "ls"]);
      expect(run.code).toBe(64);
      expect(run.stderr).toContain(`--url "${url}" is not`);
      expect(run.stderr).not.toContain("network.error");
    }
  });

  it("nothing listening: the error names the URL and ECONNREFUSED, each retry is told, exit 75", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const run = await cli.run(["--url", url, "jobs", "ls"], {
      configDir: cli.freshConfigDir(),
      env: { CJS_API_KEY: "cjs_not-used" },
    });
    expect(run.code).toBe(75);
    expect(run.stderr).toContain(
      `error network.error: Could not reach ${url}/api/compute/jobs/list: connection refused`,
    );
    expect(run.stderr).toContain("ECONNREFUSED");
    expect(run.stderr).toMatch(/trying again in [\d.]+ s \(retry 1\)/);
  });

  // Whether a retry follows depends on the resolver's answer (unknown, or no answer for now): the unit tests hold that rule.
  it("a host name that does not resolve is said so, with the URL", async () => {
    const run = await cli.run(["--url", "http://no-such-host.invalid:8080", "jobs", "ls"], {
      configDir: cli.freshConfigDir(),
      env: { CJS_API_KEY: "cjs_not-used" },
    });
    expect(run.code).toBe(75);
    expect(run.stderr).toContain("Could not reach http://no-such-host.invalid:8080/api/compute/jobs/list: host name");
  });

  it("with the service stopped, a signed-in cjs names the URL and the cause, exits 75 and keeps its session", async () => {
    const stopping = await startGateway(nats.url);
    const session = new CliRunner({ baseUrl: stopping.baseUrl, appId: tenant.app.app_id });
    try {
      const configDir = await session.loggedIn({ email: tenant.user.email, password: tenant.password });
      await stopping.stop();
      const run = await session.run(["jobs", "ls"], { configDir });
      expect(run.code).toBe(75);
      expect(run.stderr).toContain(`Could not reach ${stopping.baseUrl}/api/compute/jobs/list: connection refused`);
      expect(existsSync(join(configDir, "session.json"))).toBe(true);
    } finally {
      session.cleanUp();
    }
  });

  it("logs -f whose gateway stops says on stderr that it is reconnecting, and to what", async () => {
    const stopping = await startGateway(nats.url);
    const { jobId, push } = await runningJobWithLogs(user, stopping.baseUrl, tenant.app.app_id, "cli-errors-logs");
    await push(1, logLines(1, 1));
    const { key } = await user.call("createApiKey", { name: "cli logs" });
    const following = new AbortController();
    let streaming!: () => void;
    const streamed = new Promise<void>((resolve) => (streaming = resolve));
    let reconnecting!: () => void;
    const toldReconnecting = new Promise<void>((resolve) => (reconnecting = resolve));
    const run = cli.run(["--url", stopping.baseUrl, "logs", "-f", jobId], {
      configDir: cli.freshConfigDir(),
      env: { CJS_API_KEY: key },
      signal: following.signal,
      onStdout: (text) => text.includes("line 1") && streaming(),
      onStderr: (text) => text.includes("reconnecting to") && reconnecting(),
    });

    await streamed;
    await stopping.stop();
    await toldReconnecting;
    following.abort();

    expect((await run).stderr).toContain(`reconnecting to ${stopping.baseUrl}/api/compute/jobs/${jobId}/logs in `);
  });
});

describe("what cjs takes", () => {
  it("a value outside a flag's or an argument's choices is refused naming every choice (64)", async () => {
    const states = await inProcess(["jobs", "list", "--state", "wat"]);
    expect(states.code).toBe(64);
    expect(states.stderr).toContain(
      "argument 'wat' is invalid. Allowed choices are queued, assigned, running, succeeded, failed, timed_out, cancelled.",
    );
    for (const [args, choices] of [
      [["nodes", "ls", "--state", "gone"], "online, draining, offline"],
      [["jobs", "export", "--format", "xml"], "csv, ndjson"],
      [["users", "set-role", "usr_0000000000000000000a", "owner"], "admin, member"],
      [["completion", "fish"], "bash, zsh"],
    ] as const) {
      const run = await inProcess([...args]);
      expect(run.code, args.join(" ")).toBe(64);
      expect(run.stderr, args.join(" ")).toContain(`Allowed choices are ${choices}.`);
    }
    const scopes = await inProcess(["keys", "create", "--name", "ci", "--scopes", "jobs:read,artifacts"]);
    expect(scopes.code).toBe(64);
    expect(scopes.stderr).toContain('"artifacts" is not a scope. The scopes are jobs:read, jobs:write,');
  });

  it("an id that is not one is refused with the value and what such an id looks like (64)", async () => {
    const run = await inProcess(["jobs", "get", "job_doesnotexist"]);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain(
      "value 'job_doesnotexist' is invalid for argument 'job'. It is not a job id: `job_` and 20 letters or digits.",
    );
  });

  it("--version prints the version", async () => {
    const run = await inProcess(["--version"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});
