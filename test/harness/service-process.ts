/**
 * A service run as a real child process, exactly as production runs it
 * (`node --import tsx services/<name>/main.ts`, with its flags from shared/runtime/node-flags.ts),
 * so a test can SIGKILL it mid-stream.
 * Children still alive when the test process exits are killed with it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { nodeFlagsOf } from "../../shared/runtime/index.js";
import { programArgs } from "./programs.js";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const OUTPUT_TAIL_CHARS = 16_000;
const STOP_GRACE_MS = 10_000;

export interface ServiceProcess {
  readonly name: string;
  readonly pid: number;
  /** Settles once the process has exited (and its output is fully read). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** True until the process has exited. */
  alive(): boolean;
  /** The last lines it wrote (stdout and stderr), for failure messages. */
  output(): string;
  /** Resolves on the first stdout JSON log line `match` accepts; rejects if the process exits first or after `timeoutMs`. */
  waitForLog(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** SIGKILL: no shutdown code runs, as in a crash. Waits for the exit. */
  kill(): Promise<void>;
  /** SIGTERM (the graceful shutdown), escalating to SIGKILL after a grace period. Idempotent. */
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
let cleanupInstalled = false;

function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.once("exit", () => {
    for (const child of children) child.kill("SIGKILL");
  });
}

export interface StartServiceProcessOptions {
  /** The service folder under `services/`, e.g. `scheduler`. */
  service: string;
  /** Added to this process's environment (PATH and the like are inherited). */
  env: Record<string, string>;
  /** Node options before the script, for those NODE_OPTIONS refuses (`--cpu-prof`). */
  nodeArgs?: readonly string[];
}

/** Spawns `services/<service>/main.ts`. It is not ready yet: wait for a log line or a ping. */
export function startServiceProcess({ service, env, nodeArgs = [] }: StartServiceProcessOptions): ServiceProcess {
  installCleanup();
  const args = [...nodeFlagsOf(service), ...nodeArgs, ...programArgs(`services/${service}/main.ts`)];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error(`could not spawn services/${service}/main.ts`);
  children.add(child);

  let tail = "";
  let partial = "";
  const waiters = new Set<(line: Record<string, unknown>) => void>();
  const remember = (chunk: string) => {
    tail = (tail + chunk).slice(-OUTPUT_TAIL_CHARS);
  };
  // Both pipes are always drained: a full pipe would block the child.
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    remember(chunk);
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const text of lines) {
      let line: unknown;
      try {
        line = JSON.parse(text);
      } catch {
        continue;
      }
      if (line && typeof line === "object") for (const waiter of waiters) waiter(line as Record<string, unknown>);
    }
  });
  child.stderr?.setEncoding("utf8").on("data", remember);

  let running = true;
  // Without a listener an 'error' (a failed kill, say) would crash the test process.
  child.on("error", (error) => remember(`\n[spawn error] ${error.message}\n`));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("close", (code, signal) => {
      running = false;
      children.delete(child);
      resolve({ code, signal });
    });
  });

  const terminate = async (signal: NodeJS.Signals): Promise<void> => {
    if (!running) return;
    child.kill(signal);
    if (signal !== "SIGKILL") {
      let timer: NodeJS.Timeout | undefined;
      const graceful = await Promise.race([
        exited.then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), STOP_GRACE_MS))),
      ]);
      clearTimeout(timer);
      if (graceful) return;
      child.kill("SIGKILL");
    }
    await exited;
  };

  return {
    name: service,
    pid: child.pid,
    exited,
    alive: () => running,
    output: () => tail,
    waitForLog(match, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(
              `${service} (pid ${child.pid}) logged no matching line within ${timeoutMs} ms; its output:\n${tail}`,
            ),
          );
        }, timeoutMs);
        const done = () => {
          waiters.delete(waiter);
          clearTimeout(timer);
        };
        const waiter = (line: Record<string, unknown>) => {
          if (!match(line)) return;
          done();
          resolve(line);
        };
        waiters.add(waiter);
        void exited.then(({ code, signal }) => {
          if (!waiters.has(waiter)) return;
          done();
          reject(
            new Error(
              `${service} (pid ${child.pid}) exited (code ${code}, signal ${signal}) before the awaited log line; its output:\n${tail}`,
            ),
          );
        });
      });
    },
    kill: () => terminate("SIGKILL"),
    stop: () => terminate("SIGTERM"),
  };
}
