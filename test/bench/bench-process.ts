import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { killOnExit } from "../harness/kill-on-exit.js";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const OUTPUT_TAIL_CHARS = 8_000;
const STOP_GRACE_MS = 10_000;

/** SIGTERM, and SIGKILL once `graceMs` passed without an exit; resolves when the child has exited. */
export async function terminate(child: ChildProcess, exited: Promise<unknown>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const graceful = await Promise.race([
    exited.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
  ]);
  clearTimeout(timer);
  if (!graceful) {
    child.kill("SIGKILL");
    await exited;
  }
}

/** A helper program of the bench (the BullMQ worker, the bare publish server) in a process of its own. */
export interface BenchProcess {
  readonly name: string;
  readonly pid: number;
  /** Messages the child sends over its IPC channel. */
  onMessage(listener: (message: unknown) => void): void;
  send(message: unknown): void;
  /** Rejects when the process exits before `stop`: a helper that dies means the scenario cannot complete. */
  readonly died: Promise<never>;
  /** The last lines it wrote, for failure messages. */
  output(): string;
  /** SIGTERM, SIGKILL after a grace period. Idempotent. */
  stop(): Promise<void>;
}

/** Runs `file` (relative to the repository) with `node --import tsx`, as the services run, with an IPC channel. */
export function startBenchProcess(name: string, file: string, env: Record<string, string>): BenchProcess {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", file], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  if (child.pid === undefined) throw new Error(`could not spawn ${file}`);
  let tail = "";
  const remember = (chunk: string) => void (tail = (tail + chunk).slice(-OUTPUT_TAIL_CHARS));
  child.stdout?.setEncoding("utf8").on("data", remember);
  child.stderr?.setEncoding("utf8").on("data", remember);
  child.on("error", (error) => remember(`\n[spawn error] ${error.message}\n`));
  const forget = killOnExit({ killNow: () => void child.kill("SIGKILL") });
  let stopping = false;
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const died = exited.then((): never => {
    throw new Error(
      `${name} (pid ${child.pid}) exited (code ${child.exitCode}, signal ${child.signalCode})${stopping ? " while stopping" : ""}; its output:\n${tail}`,
    );
  });
  died.catch(() => undefined);
  let stopped: Promise<void> | undefined;
  return {
    name,
    pid: child.pid,
    onMessage: (listener) => void child.on("message", listener),
    send: (message) => void (child.connected ? child.send(message as object) : undefined),
    died,
    output: () => tail,
    stop: () =>
      (stopped ??= (async () => {
        stopping = true;
        await terminate(child, exited, STOP_GRACE_MS);
        forget();
      })()),
  };
}
