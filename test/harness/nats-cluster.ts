/**
 * A real three-server NATS JetStream cluster for integration tests: nats-server processes
 * on 127.0.0.1, each with its own store, client port and route port, routed to each
 * other under one cluster name. Every harness picks random ports and a random cluster
 * name, so clusters of different test files never join each other.
 *
 * Needs a nats-server binary (see `findNatsServerBinary`); unlike `startNats` it neither
 * uses `NATS_URL` nor falls back to Docker.
 */
import { mkdirSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { jetstreamManager, StorageType } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import {
  findNatsServerBinary,
  NATS_SERVER_NOT_FOUND,
  NatsServerProcess,
  ServerExitedError,
} from "../../shared/nats-server/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";
import { freePort } from "./free-port.js";
import { killOnExit } from "./kill-on-exit.js";

export interface NatsClusterHarness extends AsyncDisposable {
  /** Comma-separated client URLs of all nodes: what services get as `NATS_URL`. */
  readonly url: string;
  /** One client URL per node, in node order. */
  readonly urls: readonly string[];
  /** What `CJS_NATS_REPLICAS` should be on this cluster (3). */
  readonly replicas: number;
  /** SIGKILLs node `index` and waits for it to exit; its store stays for `restart`. */
  kill(index: number): Promise<void>;
  /**
   * Starts node `index` again with the same ports, name and store (stopping it first if it
   * runs). Resolves once it has rejoined: a JetStream API call made through it is answered.
   */
  restart(index: number): Promise<void>;
  /** Ends every node and removes the stores. Idempotent. */
  stop(): Promise<void>;
}

const HOST = "127.0.0.1";
const REPLICAS = 3;
const PORT_ATTEMPTS = 5;
/** A fresh cluster elects its meta leader within seconds; this bound only ends a hopeless wait. */
const QUORUM_TIMEOUT_MS = 30_000;

interface NodeSpec {
  name: string;
  port: number;
  clusterPort: number;
  storeDir: string;
}

export async function startNatsCluster(options: { nodes?: number } = {}): Promise<NatsClusterHarness> {
  const nodes = options.nodes ?? 3;
  if (!Number.isInteger(nodes) || nodes < REPLICAS)
    throw new Error(`a cluster for R${REPLICAS} streams needs at least ${REPLICAS} nodes, not ${nodes}`);
  const binary = findNatsServerBinary(process.env);
  if (!binary) throw new Error(NATS_SERVER_NOT_FOUND);
  const storeRoot = await mkdtemp(join(tmpdir(), "nats-cluster-"));
  for (let attempt = 1; ; attempt++) {
    const cluster = new LocalCluster(
      binary,
      storeRoot,
      `cjs-test-${randomBase62(8)}`,
      await nodeSpecs(nodes, storeRoot),
    );
    try {
      await cluster.launchAll();
      return cluster;
    } catch (error) {
      await cluster.stop();
      const retry = error instanceof ServerExitedError && error.portInUse && attempt < PORT_ATTEMPTS;
      if (!retry) throw error;
    }
  }
}

/** Two distinct free ports per node, and a store directory each. */
async function nodeSpecs(count: number, storeRoot: string): Promise<NodeSpec[]> {
  const ports = new Set<number>();
  while (ports.size < count * 2) ports.add(await freePort());
  const [...list] = ports;
  return Array.from({ length: count }, (_, index) => ({
    name: `n${index + 1}`,
    port: list[index * 2]!,
    clusterPort: list[index * 2 + 1]!,
    storeDir: join(storeRoot, `n${index + 1}`),
  }));
}

class LocalCluster implements NatsClusterHarness {
  readonly replicas = REPLICAS;
  readonly #processes: (NatsServerProcess | undefined)[];
  #stopped = false;
  readonly #forget: () => void;

  constructor(
    private readonly binary: string,
    private readonly storeRoot: string,
    private readonly clusterName: string,
    private readonly specs: readonly NodeSpec[],
  ) {
    this.#processes = specs.map(() => undefined);
    this.#forget = killOnExit(this);
  }

  get urls(): readonly string[] {
    return this.specs.map((spec) => `nats://${HOST}:${spec.port}`);
  }

  get url(): string {
    return this.urls.join(",");
  }

  /** Starts every node at once (none answers JetStream before a majority runs), then waits for a meta leader. */
  async launchAll(): Promise<void> {
    const started = await Promise.allSettled(this.specs.map((_, index) => this.launch(index)));
    const failed = started.find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
    await this.waitForQuorum();
  }

  async kill(index: number): Promise<void> {
    this.assertUsable("kill", index);
    await this.#processes[index]?.stop("SIGKILL");
  }

  async restart(index: number): Promise<void> {
    this.assertUsable("restart", index);
    await this.#processes[index]?.stop("SIGTERM");
    // Another test file's free-port probe may hold one of our ports for an instant.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.launch(index);
        return;
      } catch (error) {
        if (!(error instanceof ServerExitedError && error.portInUse && attempt < PORT_ATTEMPTS)) throw error;
        await delay(100 * attempt);
      }
    }
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await Promise.all(this.#processes.map((server) => server?.stop("SIGTERM")));
    this.#forget();
    await rm(this.storeRoot, { recursive: true, force: true });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  /** Synchronous last resort for the process 'exit' handler. */
  killNow(): void {
    for (const server of this.#processes) server?.killNow();
    rmSync(this.storeRoot, { recursive: true, force: true });
  }

  private assertUsable(what: string, index: number): void {
    if (this.#stopped) throw new Error(`cannot ${what} node ${index}: the cluster was stopped and its stores removed`);
    if (!this.specs[index])
      throw new Error(`cannot ${what} node ${index}: the cluster has nodes 0 to ${this.specs.length - 1}`);
  }

  private async launch(index: number): Promise<void> {
    const spec = this.specs[index]!;
    mkdirSync(spec.storeDir, { recursive: true });
    this.#processes[index] = undefined;
    this.#processes[index] = await NatsServerProcess.start({
      binary: this.binary,
      host: HOST,
      port: spec.port,
      storeDir: spec.storeDir,
      serverName: spec.name,
      cluster: {
        name: this.clusterName,
        port: spec.clusterPort,
        routes: this.specs
          .filter((other) => other !== spec)
          .map((other) => `nats-route://${HOST}:${other.clusterPort}`),
      },
    });
  }

  /** Creating (and deleting) an R3 stream proves a meta leader and enough JetStream peers. */
  private async waitForQuorum(): Promise<void> {
    const nc = await connect({ servers: [...this.urls], timeout: 2_000 });
    try {
      const jsm = await jetstreamManager(nc, { timeout: 2_000 });
      const name = `HARNESS_QUORUM_${randomBase62(8)}`;
      const deadline = Date.now() + QUORUM_TIMEOUT_MS;
      for (let pauseMs = 50; ; pauseMs = Math.min(pauseMs * 2, 500)) {
        try {
          await jsm.streams.add({
            name,
            subjects: [`harness.quorum.${name}`],
            num_replicas: REPLICAS,
            storage: StorageType.Memory,
          });
          await jsm.streams.delete(name);
          return;
        } catch (error) {
          if (Date.now() > deadline)
            throw new Error(`the cluster formed no JetStream quorum within ${QUORUM_TIMEOUT_MS} ms`, { cause: error });
        }
        await delay(pauseMs);
      }
    } finally {
      await nc.close();
    }
  }
}
