import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { z } from "zod";
import {
  type Agent,
  AgentError,
  buildAgent,
  loadConfig as loadAgentConfig,
  stateFilePath,
} from "../../clients/agent/index.js";
import { ApiError, ComputeClient } from "../../shared/client/index.js";
import { requestRpc } from "../../shared/nats/index.js";
import { type Logger, randomBase62, systemClock } from "../../shared/runtime/index.js";
import type { DevLogin } from "./bootstrap.js";

/** The local agent's settings: the operator pool everyone submits to by default, two jobs at once. */
const POOL = "default";
const SLOTS = 2;
/** `make dev` does not wait longer than this for the agent before printing the banner. */
const START_TIMEOUT_MS = 20_000;

/** The API key the local agent registers with, minted once and kept in the data dir (mode 0600). */
const DevAgentKeyFile = z.object({ key_id: z.string(), key: z.string() });
type DevAgentKeyFile = z.infer<typeof DevAgentKeyFile>;

export interface LocalAgent {
  agent: Agent;
  nodeId: string;
  pool: string;
  slots: number;
}

export interface LocalAgentOptions {
  /** The dev gateway, as the agent reaches it. */
  gatewayUrl: string;
  /** For the operator command that makes the agent's user. */
  nc: NatsConnection;
  login: DevLogin;
  dataDir: string;
  logger: Logger;
  logLevel: string;
  env: Record<string, string | undefined>;
}

/** The saved key of an agent, or null when there is none (or it is unreadable, so a new one is minted). */
export async function readAgentKeyFile(path: string): Promise<DevAgentKeyFile | null> {
  try {
    return DevAgentKeyFile.parse(JSON.parse(await readFile(path, "utf8")));
  } catch {
    return null;
  }
}

/**
 * Mints an agent's API key, as a user would: over HTTP, signed in as a user of the dev
 * business made for it. Not the admin, so the admin's rate-limit budget is all theirs.
 * The key is kept at `path` (mode 0600).
 */
export async function mintAgentKey(
  options: Pick<LocalAgentOptions, "gatewayUrl" | "nc" | "login">,
  path: string,
  keyName = "local agent (make dev)",
): Promise<string> {
  const email = `local-agent-${randomBase62(8).toLowerCase()}@${options.login.email.split("@")[1]}`;
  const password = randomBase62(24);
  await requestRpc(options.nc, "adminUserCreate", {
    app_id: options.login.appId,
    business_id: options.login.businessId,
    email,
    password,
    role: "admin",
  });
  const anonymous = new ComputeClient({ baseUrl: options.gatewayUrl, appId: options.login.appId });
  const tokens = await anonymous.call("login", { email, password });
  const minted = await anonymous.with({ accessToken: tokens.access_token }).call("createApiKey", { name: keyName });
  await writeFile(
    path,
    `${JSON.stringify({ key_id: minted.key_id, key: minted.key } satisfies DevAgentKeyFile, null, 2)}\n`,
    { mode: 0o600 },
  );
  return minted.key;
}

function refusedKey(error: unknown): boolean {
  return (
    error instanceof AgentError &&
    error.code === "agent.registration_refused" &&
    error.cause instanceof ApiError &&
    error.cause.code === "auth.invalid_credentials"
  );
}

/**
 * Runs one agent in this process, so a job submitted to `make dev` really runs. Its work
 * dir is `<data dir>/agent`, so its node (and the jobs it had running) survive a restart.
 * A key or state file the service no longer knows (the NATS store was wiped) is replaced once.
 */
export async function startLocalAgent(options: LocalAgentOptions): Promise<LocalAgent> {
  const workDir = join(options.dataDir, "agent");
  const keyPath = join(options.dataDir, "dev-agent-key.json");

  const attempt = async (): Promise<LocalAgent> => {
    const saved = await readAgentKeyFile(keyPath);
    const apiKey = saved?.key ?? (await mintAgentKey(options, keyPath));
    const config = loadAgentConfig({
      CJS_GATEWAY_URL: options.gatewayUrl,
      CJS_APP_ID: options.login.appId,
      CJS_API_KEY: apiKey,
      CJS_POOL: POOL,
      CJS_SLOTS: String(SLOTS),
      CJS_WORK_DIR: workDir,
      CJS_NODE_NAME: "local agent (make dev)",
      LOG_LEVEL: options.logLevel,
    });
    const agent = buildAgent({ config, logger: options.logger, clock: systemClock, env: options.env });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the agent did not start within ${START_TIMEOUT_MS / 1000} s`)),
        START_TIMEOUT_MS,
      );
    });
    try {
      const identity = await Promise.race([agent.start(), timeout]);
      return { agent, nodeId: identity.nodeId, pool: identity.poolId, slots: identity.slots };
    } catch (error) {
      await agent.stop();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };

  try {
    return await attempt();
  } catch (error) {
    if (refusedKey(error)) {
      options.logger.warn("the saved API key of the local agent is refused; minting a new one");
      await rm(keyPath, { force: true });
      return attempt();
    }
    if (error instanceof AgentError && error.code === "agent.node_key_refused") {
      const aside = `${stateFilePath(workDir)}.refused-${Date.now()}`;
      options.logger.warn(
        { moved_to: aside },
        "the local agent's node is unknown to this store; registering a new one",
      );
      await rename(stateFilePath(workDir), aside);
      return attempt();
    }
    throw error;
  }
}
