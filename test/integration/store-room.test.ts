/**
 * JetStream reserves a bounded stream's `max_bytes` in its store when the stream is made.
 * A size the store has no room for stops the service at start at once, with a message that
 * names what to change, instead of eight retries and a bare "insufficient storage".
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { ensureObjectStore, ensureStream, OBJECT_STORES } from "../../shared/nats/index.js";
import { startNats } from "../harness/nats-server.js";
import { serviceProcessEnv } from "../harness/readiness.js";
import { programArgs } from "../harness/programs.js";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const STORE = "64MB";
const TOO_BIG = 128 * 1024 * 1024;
const SETTINGS =
  /CJS_LOGS_MAX_BYTES, CJS_ARTIFACT_STORE_MAX_BYTES\) or give the store more room \(nats-server's max_file_store/;

/** Runs a service's program to its exit, and returns its exit code and everything it wrote. */
function runService(service: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, programArgs(`services/${service}/main.ts`), {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, output })));
}

describe(`a JetStream store of ${STORE}`, () => {
  it("refuses a stream and an object store sized past it, each named with the settings to change, and makes neither", async () => {
    await using nats = await startNats({ maxFileStore: STORE });
    const nc = await connect({ servers: nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      await expect(ensureStream(jsm, { name: "TOO_BIG", subjects: ["too-big.>"], max_bytes: TOO_BIG })).rejects.toThrow(
        SETTINGS,
      );
      await expect(ensureObjectStore(nc, OBJECT_STORES.artifacts, { replicas: 1, maxBytes: TOO_BIG })).rejects.toThrow(
        SETTINGS,
      );
      const streams = await jsm.streams.names().next();
      expect(streams).not.toContain("TOO_BIG");
      expect(streams).not.toContain(`OBJ_${OBJECT_STORES.artifacts}`);
    } finally {
      await nc.close();
    }
  });

  it("stops the log relay at its start with its default log stream size (10 GiB), exit 1, the message in its log", async () => {
    await using nats = await startNats({ maxFileStore: STORE });
    const { code, output } = await runService("log-relay", serviceProcessEnv("log-relay", nats.url, 1));
    expect(output).toMatch(SETTINGS);
    expect(code, output).toBe(1);
  });
});
