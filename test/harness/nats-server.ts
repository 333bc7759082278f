/**
 * A real NATS JetStream server for integration tests: one per test file, on a random
 * port, with a temporary store, so test files never share state.
 *
 * Resolution order:
 * 1. `NATS_URL` set: use that server (shared, so tests must pick unique names);
 *    `restart()` and `kill()` throw, `stop()` does nothing.
 * 2. A `nats-server` binary (`NATS_SERVER_BIN`, else `PATH`, /usr/sbin, /usr/local/bin):
 *    spawned as a child process.
 * 3. Docker reachable: a container of the pinned release (`nats:<NATS_SERVER_PINNED>`) through testcontainers.
 * 4. Otherwise: an Error that says how to install nats-server.
 */
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import {
  findNatsServerBinary,
  NATS_SERVER_NOT_FOUND,
  NatsServerProcess,
  NATS_SERVER_PINNED,
  ServerExitedError,
  waitForJetStream,
} from "../../shared/nats-server/index.js";
import { freePort } from "./free-port.js";
import { killOnExit } from "./kill-on-exit.js";

export interface NatsHarness extends AsyncDisposable {
  /** Client URL of the server, e.g. `nats://127.0.0.1:41873`. */
  readonly url: string;
  /** The JetStream store directory on this machine; undefined when the server is not a local process. */
  readonly storeDir: string | undefined;
  /** Ends the server and removes its store. Idempotent; a no-op for `NATS_URL`. */
  stop(): Promise<void>;
  /** Stops the server (if running) and starts it again on the same port with the same store. */
  restart(): Promise<void>;
  /** SIGKILLs the server and waits for it to exit; the store stays for `restart()`. */
  kill(): Promise<void>;
}

export { NATS_SERVER_NOT_FOUND };

const STOP_GRACE_MS = 10_000;
const PORT_ATTEMPTS = 5;

export interface StartNatsOptions {
  /** Lines added to the server's configuration (users and permissions); needs a local nats-server binary. */
  extraConfig?: string;
  /** The JetStream store's size (`max_file_store`, e.g. "64MB"); needs a local nats-server binary. */
  maxFileStore?: string;
}

export async function startNats(options: StartNatsOptions = {}): Promise<NatsHarness> {
  const externalUrl = process.env.NATS_URL;
  const ownServer = options.extraConfig !== undefined || options.maxFileStore !== undefined;
  if (externalUrl && !ownServer) return useExternalServer(externalUrl);

  const binary = findNatsServerBinary(process.env);
  if (binary) return LocalServer.start(binary, options);
  if (ownServer)
    throw new Error(
      `this test configures its own nats-server, so it needs a nats-server binary: ${NATS_SERVER_NOT_FOUND}`,
    );

  const container = await startContainer();
  if (container) return container;

  throw new Error(NATS_SERVER_NOT_FOUND);
}

async function useExternalServer(url: string): Promise<NatsHarness> {
  await waitForJetStream(url, new Promise<never>(() => {}));
  const refuse = async (what: string): Promise<never> => {
    throw new Error(
      `cannot ${what} the NATS server at NATS_URL=${url}: the harness does not own it; unset NATS_URL to let tests start their own nats-server`,
    );
  };
  return {
    url,
    storeDir: undefined,
    stop: async () => {},
    restart: () => refuse("restart"),
    kill: () => refuse("kill"),
    [Symbol.asyncDispose]: async () => {},
  };
}

class LocalServer implements NatsHarness {
  #process: NatsServerProcess | undefined;
  #stopped = false;
  #forget: () => void = () => {};

  private constructor(
    private readonly binary: string,
    private readonly port: number,
    readonly storeDir: string,
    private readonly options: Pick<StartNatsOptions, "extraConfig" | "maxFileStore">,
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  static async start(binary: string, options: StartNatsOptions = {}): Promise<LocalServer> {
    const storeDir = await mkdtemp(join(tmpdir(), "nats-harness-"));
    for (let attempt = 1; ; attempt++) {
      const server = new LocalServer(binary, await freePort(), storeDir, options);
      server.#forget = killOnExit(server);
      try {
        await server.launch();
        return server;
      } catch (error) {
        server.#forget();
        const retry = error instanceof ServerExitedError && error.portInUse && attempt < PORT_ATTEMPTS;
        if (!retry) {
          await rm(storeDir, { recursive: true, force: true });
          throw error;
        }
      }
    }
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await this.#process?.stop("SIGTERM");
    this.#forget();
    await rm(this.storeDir, { recursive: true, force: true });
  }

  async restart(): Promise<void> {
    this.assertNotStopped("restart");
    await this.#process?.stop("SIGTERM");
    // Another test file's free-port probe may hold our port for an instant.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.launch();
        return;
      } catch (error) {
        if (!(error instanceof ServerExitedError && error.portInUse && attempt < PORT_ATTEMPTS)) throw error;
        await delay(100 * attempt);
      }
    }
  }

  async kill(): Promise<void> {
    this.assertNotStopped("kill");
    await this.#process?.stop("SIGKILL");
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  /** Synchronous last resort for the process 'exit' handler. */
  killNow(): void {
    this.#process?.killNow();
    rmSync(this.storeDir, { recursive: true, force: true });
  }

  private assertNotStopped(what: string): void {
    if (this.#stopped)
      throw new Error(`cannot ${what} nats-server at ${this.url}: the harness was stopped and its store removed`);
  }

  private async launch(): Promise<void> {
    this.#process = undefined;
    this.#process = await NatsServerProcess.start({
      binary: this.binary,
      host: "127.0.0.1",
      port: this.port,
      storeDir: this.storeDir,
      extraConfig: this.options.extraConfig,
      maxFileStore: this.options.maxFileStore,
    });
  }
}

/** Docker fallback; undefined when no container runtime answers. */
async function startContainer(): Promise<NatsHarness | undefined> {
  let tc: typeof import("testcontainers");
  let runtime: Awaited<ReturnType<typeof import("testcontainers")["getContainerRuntimeClient"]>>;
  try {
    tc = await import("testcontainers");
    runtime = await tc.getContainerRuntimeClient();
  } catch {
    return undefined;
  }
  // A fixed host port keeps the URL valid across restarts.
  const hostPort = await freePort();
  const container = await new tc.GenericContainer(`nats:${NATS_SERVER_PINNED}`)
    .withCommand(["-js"])
    .withExposedPorts({ container: 4222, host: hostPort })
    .start();
  const url = `nats://${container.getHost()}:${hostPort}`;
  const never = new Promise<never>(() => {});
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await container.stop({ timeout: STOP_GRACE_MS });
  };
  const assertNotStopped = (what: string): void => {
    if (stopped) throw new Error(`cannot ${what} the NATS container at ${url}: the harness was stopped`);
  };
  try {
    await waitForJetStream(url, never);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    storeDir: undefined,
    stop,
    restart: async () => {
      assertNotStopped("restart");
      await container.restart({ timeout: STOP_GRACE_MS });
      await waitForJetStream(url, never);
    },
    kill: async () => {
      assertNotStopped("kill");
      const handle = runtime.container.getById(container.getId());
      await handle.kill({ signal: "SIGKILL" });
      await handle.wait();
    },
    [Symbol.asyncDispose]: stop,
  };
}
