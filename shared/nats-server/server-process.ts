import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, existsSync, constants as fsConstants, statSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as delay } from "node:timers/promises";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { type NatsServerOptions, serverConfig } from "./server-config.js";
import {
  assertSupportedServer,
  binaryVersion,
  isSupportedServerVersion,
  NATS_SERVER_MINIMUM,
  NATS_SERVER_PINNED,
} from "./server-version.js";

/** How to get a nats-server on this machine, for messages that say what is missing. */
export const NATS_SERVER_NOT_FOUND =
  `no nats-server ${NATS_SERVER_MINIMUM} or newer found: run \`make setup\` (it builds ${NATS_SERVER_PINNED} with Go into .tools/), ` +
  "set NATS_SERVER_BIN to such a binary, or set NATS_URL to a running server with JetStream enabled";

const READY_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 10_000;
const STDERR_TAIL_CHARS = 8_000;
/** Common install places that are not on every user's PATH. */
const EXTRA_BIN_DIRS = ["/usr/sbin", "/usr/local/bin"];

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The repository's root: the nearest folder above this file with a package.json (also from dist/). */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/** Where `make setup` puts the pinned server (deploy/scripts/ensure-nats-server.sh uses the same path). */
export function pinnedNatsServerPath(root = projectRoot()): string {
  return join(root, ".tools", "nats-server", NATS_SERVER_PINNED, "nats-server");
}

/**
 * The nats-server to start: `NATS_SERVER_BIN` when set (it must be executable and recent
 * enough), else the pinned build under .tools/, else the first recent enough `nats-server`
 * on PATH or in the usual places. Undefined when there is none.
 */
export function findNatsServerBinary(env: Record<string, string | undefined>): string | undefined {
  const explicit = env.NATS_SERVER_BIN;
  if (explicit) {
    if (!isExecutableFile(explicit)) throw new Error(`NATS_SERVER_BIN=${explicit} is not an executable file`);
    assertSupportedServer(binaryVersion(explicit), `NATS_SERVER_BIN=${explicit}`);
    return explicit;
  }
  const pinned = pinnedNatsServerPath();
  if (isExecutableFile(pinned)) return pinned;
  const dirs = [...(env.PATH ?? "").split(delimiter).filter(Boolean), ...EXTRA_BIN_DIRS];
  return dirs
    .map((dir) => join(dir, "nats-server"))
    .find((candidate) => {
      if (!isExecutableFile(candidate)) return false;
      const version = binaryVersion(candidate);
      return version !== undefined && isSupportedServerVersion(version);
    });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The server process ended before it was ready; `portInUse` tells a retry on another port may help. */
export class ServerExitedError extends Error {
  constructor(
    message: string,
    readonly portInUse: boolean,
  ) {
    super(message);
    this.name = "ServerExitedError";
  }
}

async function probeJetStream(url: string): Promise<void> {
  const nc = await connect({ servers: url, reconnect: false, timeout: 1_000 });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 1_000 });
    await jsm.getAccountInfo();
  } finally {
    await nc.close();
  }
}

/**
 * Polls until the server accepts a connection and answers a JetStream API call. `abort`
 * rejects when waiting is pointless (the process died); its rejection wins the race.
 */
export async function waitForJetStream(
  url: string,
  abort: Promise<never> = new Promise<never>(() => {}),
  timeoutMs = READY_TIMEOUT_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (let pauseMs = 10; Date.now() < deadline; pauseMs = Math.min(pauseMs * 2, 250)) {
    try {
      await Promise.race([probeJetStream(url), abort]);
      return;
    } catch (error) {
      if (error instanceof ServerExitedError) throw error;
      lastError = error;
    }
    await Promise.race([delay(pauseMs), abort]);
  }
  throw new Error(`NATS at ${url} did not answer JetStream within ${timeoutMs} ms: ${describe(lastError)}`);
}

/** One nats-server child process with JetStream, started and ready, or an error saying why not. */
export class NatsServerProcess {
  #stderrTail = "";

  private constructor(
    readonly options: NatsServerOptions,
    private readonly child: ChildProcess,
    /** Settles when the process has ended and its stderr is fully read. */
    readonly exited: Promise<void>,
  ) {}

  get url(): string {
    return `nats://${this.options.host}:${this.options.port}`;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  static async start(options: NatsServerOptions): Promise<NatsServerProcess> {
    const { binary, port, storeDir } = options;
    const configFile = join(storeDir, "nats-server.conf");
    await writeFile(configFile, serverConfig(options));
    const child = spawn(binary, ["-c", configFile], { stdio: ["ignore", "ignore", "pipe"] });
    let spawnError: Error | undefined;
    const exited = new Promise<void>((resolve) => {
      child.once("close", () => resolve());
      child.once("error", (error) => {
        spawnError = error;
        resolve();
      });
    });
    const server = new NatsServerProcess(options, child, exited);
    // Probing only after this line means we talk to our process, not to whoever held the port.
    let logsReady!: () => void;
    const readyLine = new Promise<void>((resolve) => (logsReady = resolve));
    // Always drained: a full stderr pipe would block the server.
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      server.#stderrTail = (server.#stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
      if (server.#stderrTail.includes("Server is ready")) logsReady();
    });
    const abort = exited.then((): never => {
      const how = spawnError ? spawnError.message : `exit code ${child.exitCode}, signal ${child.signalCode}`;
      throw new ServerExitedError(
        `nats-server (${binary}) on port ${port} exited before it was ready (${how}); its stderr:\n${server.#stderrTail}`,
        /address already in use/i.test(server.#stderrTail),
      );
    });
    abort.catch(() => {}); // observed only while waiting for readiness
    try {
      const timedOut = delay(READY_TIMEOUT_MS, undefined, { ref: false }).then((): never => {
        throw new Error(`nats-server on port ${port} logged no "Server is ready" within ${READY_TIMEOUT_MS} ms`);
      });
      await Promise.race([readyLine, abort, timedOut]);
      await waitForJetStream(server.url, abort);
    } catch (error) {
      await server.stop("SIGKILL");
      if (error instanceof ServerExitedError) throw error;
      throw new Error(`${describe(error)}; nats-server stderr:\n${server.#stderrTail}`, { cause: error });
    }
    return server;
  }

  /** Signals the server and waits for it to exit, escalating to SIGKILL after a grace period. */
  async stop(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
    if (this.running) {
      this.child.kill(signal);
      const graceful = await Promise.race([this.exited.then(() => true), delay(STOP_GRACE_MS, false, { ref: false })]);
      if (!graceful) {
        this.child.kill("SIGKILL");
        await this.exited;
      }
    }
  }

  /** Synchronous last resort for a process 'exit' handler. */
  killNow(): void {
    this.child.kill("SIGKILL");
  }
}
