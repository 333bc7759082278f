import { type ChildProcessByStdio, spawn } from "node:child_process";
import { once } from "node:events";
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { groupAlive, readStat, signalGroup } from "./proc.js";

export interface ExitStatus {
  /** The exit code, or null when a signal ended the process. */
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How often a stopping group is checked for survivors during the grace period. */
const KILL_POLL_MS = 100;
/** After the group is gone, how long to wait for stdout and stderr to close (a daemon that left the group may hold them). */
const STREAMS_CLOSE_MS = 2_000;

/**
 * Stops a process group: SIGTERM to every member, then SIGKILL to whatever is left once
 * `graceMs` has passed. Resolves when the SIGKILL was sent or the group is gone.
 */
export async function killProcessGroup(pgid: number, graceMs: number): Promise<void> {
  if (!signalGroup(pgid, "SIGTERM")) return;
  // A stopped (SIGSTOP) process acts on SIGTERM only once continued.
  signalGroup(pgid, "SIGCONT");
  const deadline = performance.now() + graceMs;
  while (performance.now() < deadline) {
    await sleep(Math.min(KILL_POLL_MS, Math.max(0, deadline - performance.now())));
    if (!(await groupAlive(pgid))) return;
  }
  signalGroup(pgid, "SIGKILL");
}

/**
 * A job's command, started as argv (no shell) in a process group of its own, so that it
 * and everything it starts can be stopped together.
 */
export class JobProcess {
  readonly pgid: number;
  /** When the first process started, in clock ticks since boot (null without /proc). */
  readonly startTicks: number | null;
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly exited: Promise<ExitStatus>;
  private killing: Promise<void> | undefined;

  private constructor(
    child: ChildProcessByStdio<null, Readable, Readable>,
    exited: Promise<ExitStatus>,
    startTicks: number | null,
  ) {
    this.pgid = child.pid as number;
    this.startTicks = startTicks;
    this.stdout = child.stdout;
    this.stderr = child.stderr;
    this.exited = exited;
    // Errors after a successful spawn (a failed kill) carry nothing to act on.
    child.on("error", () => undefined);
  }

  /**
   * Starts `command`, handing each chunk of its output to `onOutput`; rejects with the
   * spawn error (ENOENT, EACCES, …) when it cannot start.
   */
  static async start(
    command: readonly string[],
    options: {
      cwd: string;
      env: Record<string, string>;
      onOutput: (stream: "stdout" | "stderr", chunk: Buffer) => void;
    },
  ): Promise<JobProcess> {
    const [file, ...args] = command;
    if (file === undefined) throw new Error("empty command");
    // `detached` makes the child a session and process-group leader: `kill(-pgid)` reaches its whole tree.
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      shell: false,
      stdio: ["ignore", "pipe", "pipe"],
    });
    // Listen at once, before any await: a short command can exit meanwhile, and Node
    // discards the output of an exited child's streams that nobody reads yet.
    child.stdout.on("data", (chunk: Buffer) => options.onOutput("stdout", chunk));
    child.stderr.on("data", (chunk: Buffer) => options.onOutput("stderr", chunk));
    const exited = new Promise<ExitStatus>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal })),
    );
    await Promise.race([once(child, "spawn"), once(child, "error").then(([error]) => Promise.reject(error as Error))]);
    const stat = await readStat(child.pid as number);
    return new JobProcess(child, exited, stat?.startTicks ?? null);
  }

  /** Stops the whole tree (SIGTERM, then SIGKILL after the grace). Calling it again joins the first stop. */
  kill(graceMs: number): Promise<void> {
    this.killing ??= killProcessGroup(this.pgid, graceMs);
    return this.killing;
  }

  /**
   * Resolves once the command has ended and its output is fully read. Processes it
   * left behind in its group are stopped like a cancel would: a job ends with its command.
   */
  async finish(graceMs: number): Promise<{ status: ExitStatus; leftovers: boolean }> {
    const status = await this.exited;
    const leftovers = await groupAlive(this.pgid);
    if (leftovers) await this.kill(graceMs);
    const closed = Promise.all(
      [this.stdout, this.stderr].map((stream) =>
        stream.closed ? Promise.resolve() : once(stream, "close").catch(() => undefined),
      ),
    );
    const giveUp = new AbortController();
    const timer = sleep(STREAMS_CLOSE_MS, "timeout" as const, { signal: giveUp.signal }).catch(() => "closed" as const);
    const outcome = await Promise.race([closed.then(() => "closed" as const), timer]);
    giveUp.abort();
    if (outcome === "timeout") {
      this.stdout.destroy();
      this.stderr.destroy();
    }
    return { status, leftovers };
  }
}
