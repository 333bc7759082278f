import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, errors, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jetstreamManager } from "@nats-io/jetstream";
import { loadConfig as loadGatewayConfig } from "../../services/gateway/config.js";
import { ARTIFACT_USAGE_MAX_BYTES } from "../../services/gateway/artifacts/artifact-usage.js";
import { loadConfig as loadLogRelayConfig } from "../../services/log-relay/config.js";
import { LOG_USAGE_MAX_BYTES } from "../../services/log-relay/log-store.js";
import { DELIVERIES_MAX_BYTES } from "../../services/webhooks/webhooks-context.js";
import { METERING_MAX_BYTES } from "../../shared/nats/index.js";
import { findNatsServerBinary, NATS_SERVER_NOT_FOUND } from "../../shared/nats-server/index.js";
import { freePort } from "../harness/free-port.js";
import { killOnExit } from "../harness/kill-on-exit.js";
import { startNats } from "../harness/nats-server.js";
import { DEPLOY } from "./manifest-check.js";

// The server config deploy/compose.yaml and the Kubernetes base both run.
const CONFIG = join(DEPLOY, "kubernetes", "base", "nats", "nats.conf");
const PASSWORDS = { services: "services-secret", operator: "operator-secret", agent: "agent-secret" };

function natsServer(): string {
  const binary = findNatsServerBinary(process.env);
  if (!binary) throw new Error(NATS_SERVER_NOT_FOUND);
  return binary;
}

/** The variables the config reads; the three routes lead to the cluster ports given. */
function serverEnv(routePorts: readonly [number, number, number], storeDir = "/data"): Record<string, string> {
  const [route1, route2, route3] = routePorts.map((port) => `nats://127.0.0.1:${port}`);
  return {
    NATS_SERVER_NAME: "n1",
    NATS_STORE_DIR: storeDir,
    NATS_ROUTE_1: route1 ?? "",
    NATS_ROUTE_2: route2 ?? "",
    NATS_ROUTE_3: route3 ?? "",
    NATS_SERVICES_PASSWORD: PASSWORDS.services,
    NATS_OPERATOR_PASSWORD: PASSWORDS.operator,
    NATS_AGENT_PASSWORD: PASSWORDS.agent,
  };
}

type PermissionError = InstanceType<typeof errors.PermissionViolationError>;

/** Collects the permission errors the server sends on `nc`; `next(n)` settles with the first `n`, as "operation subject". */
function permissionErrors(nc: NatsConnection): { next(count: number): Promise<string[]> } {
  const seen: PermissionError[] = [];
  let wake = (): void => {};
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "error" && status.error instanceof errors.PermissionViolationError) {
        seen.push(status.error);
        wake();
      }
    }
  })();
  return {
    async next(count) {
      while (seen.length < count) await new Promise<void>((resolve) => (wake = resolve));
      return seen.slice(0, count).map((error) => `${error.operation} ${error.subject}`);
    },
  };
}

describe("the NATS server config", () => {
  it("is valid for nats-server once its variables are set, and names a missing one", () => {
    const valid = spawnSync(natsServer(), ["-c", CONFIG, "-t"], {
      env: serverEnv([6222, 6223, 6224]),
      encoding: "utf8",
    });
    expect(valid.status, valid.stderr).toBe(0);
    const { NATS_AGENT_PASSWORD: _omitted, ...withoutAgent } = serverEnv([6222, 6223, 6224]);
    const invalid = spawnSync(natsServer(), ["-c", CONFIG, "-t"], { env: withoutAgent, encoding: "utf8" });
    expect(invalid.status).not.toBe(0);
    expect(invalid.stderr).toContain("NATS_AGENT_PASSWORD");
  });
});

describe("the NATS users of the config, on a running server", () => {
  let server: ChildProcess;
  let url: string;
  let forget: () => void = () => {};
  const store = mkdtempSync(join(tmpdir(), "cjs-nats-config-"));
  const connections: NatsConnection[] = [];

  async function as(
    user: keyof typeof PASSWORDS,
    inboxPrefix?: string,
  ): Promise<{ nc: NatsConnection; denied: ReturnType<typeof permissionErrors> }> {
    const nc = await connect({ servers: url, user, pass: PASSWORDS[user], ...(inboxPrefix ? { inboxPrefix } : {}) });
    connections.push(nc);
    return { nc, denied: permissionErrors(nc) };
  }

  beforeAll(async () => {
    const [port, clusterPort, httpPort, absent1, absent2] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    url = `nats://127.0.0.1:${port}`;
    const args = [
      "-c",
      CONFIG,
      "-a",
      "127.0.0.1",
      "-p",
      String(port),
      "-m",
      String(httpPort),
      "--cluster",
      `nats://127.0.0.1:${clusterPort}`,
    ];
    // One server runs the cluster config alone: its own route is ignored, the other two find no one.
    server = spawn(natsServer(), args, {
      env: serverEnv([clusterPort, absent1, absent2], store),
      stdio: ["ignore", "ignore", "pipe"],
    });
    forget = killOnExit({ killNow: () => server.kill("SIGKILL") });
    let log = "";
    server.stderr?.setEncoding("utf8");
    await new Promise<void>((resolve, reject) => {
      server.stderr?.on("data", (chunk: string) => {
        log += chunk;
        if (log.includes("Server is ready")) resolve();
      });
      server.once("exit", (code) => reject(new Error(`nats-server exited (${code}) before it was ready:\n${log}`)));
    });
  });

  afterAll(async () => {
    await Promise.all(connections.map((nc) => nc.close()));
    if (server.exitCode === null) {
      server.kill("SIGTERM");
      await once(server, "exit");
    }
    forget();
    rmSync(store, { recursive: true, force: true });
  });

  it("refuses a client without a user of the config", async () => {
    await expect(connect({ servers: url, reconnect: false })).rejects.toThrow(/Authorization/i);
    await expect(connect({ servers: url, user: "agent", pass: "wrong", reconnect: false })).rejects.toThrow(
      /Authorization/i,
    );
  });

  it("lets an agent call the node plane and get the services' answer on its own inbox prefix", async () => {
    const services = await as("services");
    services.nc.subscribe("cjs.nodeplane.heartbeat", { callback: (_error, msg) => void msg.respond("ok") });
    await services.nc.flush();
    const agent = await as("agent", "_INBOX_agents");
    const answer = await agent.nc.request("cjs.nodeplane.heartbeat", "{}", { timeout: 5000 });
    expect(answer.string()).toBe("ok");
  });

  it("keeps an agent off the JetStream API, the buckets, the rest of cjs.> and the services' inboxes", async () => {
    const agent = await as("agent", "_INBOX_agents");
    for (const subject of [
      "$JS.API.DIRECT.GET.KV_cjs_signing_keys",
      "$KV.cjs_signing_keys.current",
      "cjs.scheduler.jobs.submit",
      "cjs.admin.app.create",
    ]) {
      agent.nc.publish(subject);
    }
    agent.nc.subscribe("_INBOX.>");
    agent.nc.subscribe("$KV.>");
    expect((await agent.denied.next(6)).sort()).toEqual(
      [
        "publish $JS.API.DIRECT.GET.KV_cjs_signing_keys",
        "publish $KV.cjs_signing_keys.current",
        "publish cjs.scheduler.jobs.submit",
        "publish cjs.admin.app.create",
        "subscription _INBOX.>",
        "subscription $KV.>",
      ].sort(),
    );
  });

  it("lets the operator CLI send admin commands and read the answers on its own inbox prefix, and nothing else", async () => {
    const services = await as("services");
    services.nc.subscribe("cjs.admin.app.create", { callback: (_error, msg) => void msg.respond("created") });
    await services.nc.flush();
    const operator = await as("operator", "_INBOX_admin");
    expect((await operator.nc.request("cjs.admin.app.create", "{}", { timeout: 5000 })).string()).toBe("created");
    operator.nc.publish("$JS.API.INFO");
    operator.nc.publish("cjs.nodeplane.register");
    operator.nc.subscribe("_INBOX.>");
    operator.nc.subscribe("$KV.>");
    expect((await operator.denied.next(4)).sort()).toEqual(
      ["publish $JS.API.INFO", "publish cjs.nodeplane.register", "subscription _INBOX.>", "subscription $KV.>"].sort(),
    );
  });

  it("gives the services the JetStream API, the buckets, the object store, cjs.> and their own inboxes", async () => {
    const services = await as("services");
    const subjects = ["$JS.API.INFO", "$KV.cjs_jobs.x", "$O.cjs_artifacts.M.x", "cjs.metering.x", "_INBOX.x"];
    const received: string[] = [];
    const allReceived = new Promise<void>((resolve) => {
      for (const filter of ["$JS.API.>", "$KV.>", "$O.>", "cjs.>", "_INBOX.>"]) {
        services.nc.subscribe(filter, {
          callback: (_error, msg) => {
            received.push(msg.subject);
            if (received.length === subjects.length) resolve();
          },
        });
      }
    });
    await services.nc.flush();
    for (const subject of subjects) services.nc.publish(subject);
    await allReceived;
    expect(received.sort()).toEqual([...subjects].sort());
  });
});

describe("the JetStream store of the config", () => {
  it("has room for every stream the services reserve at their default sizes", async () => {
    // The config's max_file_store, on a server of its own: JetStream of the config alone waits for its cluster.
    const maxFileStore = /^\s*max_file_store:\s*(\S+)\s*$/m.exec(readFileSync(CONFIG, "utf8"))?.[1];
    expect(maxFileStore).toBeDefined();
    await using nats = await startNats({ maxFileStore: maxFileStore ?? "" });
    const nc = await connect({ servers: nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      // Each bounded stream reserves its max_bytes when it is made; R3 puts a replica of each on every server.
      const reserved = {
        CJS_LOGS: loadLogRelayConfig({}).CJS_LOGS_MAX_BYTES,
        OBJ_cjs_artifacts: loadGatewayConfig({}).CJS_ARTIFACT_STORE_MAX_BYTES,
        CJS_METERING: METERING_MAX_BYTES,
        CJS_WEBHOOK_DELIVERIES: DELIVERIES_MAX_BYTES,
        CJS_LOG_USAGE: LOG_USAGE_MAX_BYTES,
        CJS_ARTIFACT_USAGE: ARTIFACT_USAGE_MAX_BYTES,
      };
      for (const [name, maxBytes] of Object.entries(reserved))
        await jsm.streams.add({ name: `RESERVE_${name}`, subjects: [`reserve.${name}`], max_bytes: maxBytes });
      expect((await jsm.getAccountInfo()).streams).toBe(Object.keys(reserved).length);
    } finally {
      await nc.close();
    }
  });
});
