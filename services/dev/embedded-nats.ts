import { mkdir } from "node:fs/promises";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import {
  findNatsServerBinary,
  NATS_SERVER_NOT_FOUND,
  NatsServerProcess,
  waitForJetStream,
} from "../../shared/nats-server/index.js";

export interface NatsForDev {
  url: string;
  /** Where the store is, when this process runs the server. */
  storeDir: string | undefined;
  stop(): Promise<void>;
}

/** True when nothing listens on `host:port` (a bind there succeeds). */
export function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolvePort) => {
    const probe = createServer();
    probe.once("error", () => resolvePort(false));
    probe.listen(port, host, () => probe.close(() => resolvePort(true)));
  });
}

/** Uses `NATS_URL` when set; else starts nats-server with its store under the data dir, so a restart keeps all data. */
export async function natsForDev(options: {
  natsUrl: string | undefined;
  dataDir: string;
  port: number;
  env: Record<string, string | undefined>;
}): Promise<NatsForDev> {
  if (options.natsUrl) {
    await waitForJetStream(options.natsUrl);
    return { url: options.natsUrl, storeDir: undefined, stop: async () => {} };
  }
  const binary = findNatsServerBinary(options.env);
  if (!binary) throw new Error(NATS_SERVER_NOT_FOUND);
  const host = "127.0.0.1";
  if (!(await portIsFree(host, options.port))) {
    throw new Error(
      `port ${options.port} is taken: is another \`make dev\` or nats-server running? ` +
        "Stop it, or set CJS_NATS_PORT to another port, or NATS_URL to use that server.",
    );
  }
  const storeDir = resolve(join(options.dataDir, "nats"));
  await mkdir(storeDir, { recursive: true });
  const server = await NatsServerProcess.start({ binary, host, port: options.port, storeDir });
  process.once("exit", () => server.killNow());
  return { url: server.url, storeDir, stop: () => server.stop() };
}
