import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  findNatsServerBinary,
  NATS_SERVER_NOT_FOUND,
  NatsServerProcess,
  ServerExitedError,
} from "../../../shared/nats-server/index.js";
import { freePort } from "../../harness/free-port.js";
import { killOnExit } from "../../harness/kill-on-exit.js";

const PORT_ATTEMPTS = 5;

/** A nats-server of the bench's own with its HTTP monitoring port open (/connz, /varz). */
export interface MonitoredNats {
  readonly url: string;
  readonly storeDir: string;
  /** `http://127.0.0.1:<port>`, the server's monitoring endpoint. */
  readonly monitorUrl: string;
  /** Ends the server and removes its store. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the pinned nats-server as the harness's `startNats` does (loopback, a free port,
 * a temporary store, the default sync interval), plus a monitoring port: the message
 * census reads each connection's counters and subscriptions there. The port serves only
 * when asked, so it costs the measured bursts nothing.
 */
export async function startMonitoredNats(): Promise<MonitoredNats> {
  const binary = findNatsServerBinary(process.env);
  if (!binary) throw new Error(NATS_SERVER_NOT_FOUND);
  const storeDir = await mkdtemp(join(tmpdir(), "nats-bench-"));
  for (let attempt = 1; ; attempt++) {
    const [port, monitorPort] = [await freePort(), await freePort()];
    let server: NatsServerProcess | undefined;
    const forget = killOnExit({ killNow: () => server?.killNow() });
    try {
      server = await NatsServerProcess.start({
        binary,
        host: "127.0.0.1",
        port,
        storeDir,
        extraConfig: `http: "127.0.0.1:${monitorPort}"`,
      });
    } catch (error) {
      forget();
      if (error instanceof ServerExitedError && error.portInUse && attempt < PORT_ATTEMPTS) continue;
      await rm(storeDir, { recursive: true, force: true });
      throw error;
    }
    const running = server;
    let stopped: Promise<void> | undefined;
    return {
      url: running.url,
      storeDir,
      monitorUrl: `http://127.0.0.1:${monitorPort}`,
      stop: () =>
        (stopped ??= (async () => {
          await running.stop("SIGTERM");
          forget();
          await rm(storeDir, { recursive: true, force: true });
        })()),
    };
  }
}
