import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { z } from "zod";
import { JobResultRequest, NodeId } from "../../shared/contract/index.js";
import type { Logger } from "../../shared/runtime/index.js";
import { AgentError } from "./agent-error.js";

export const STATE_FILE_NAME = "agent-state.json";

export function stateFilePath(workDir: string): string {
  return join(workDir, STATE_FILE_NAME);
}

/** An attempt this agent took on and has not finished reporting. */
export const AttemptEntry = z.object({
  job_id: z.string(),
  attempt: z.number().int().min(1),
  workspace: z.string(),
  /** The job's process group (its first process's pid), once spawned. */
  pgid: z.number().int().positive().nullable(),
  /** When that process started (`/proc/<pid>/stat` field 22), to tell it from a later process with the same pid. */
  pgid_start_ticks: z.number().int().nullable(),
  /** The highest log `seq` the service acknowledged; the spool holds every line above it. */
  acked_seq: z.number().int().min(0),
  artifact_upload_url: z.string().nullable(),
  /** The result to report, once the command has ended (null while it runs). */
  result: JobResultRequest.nullable(),
  /** Why it was stopped by the service (`cancelled`, `reassigned`, …): then no result is reported. */
  stopped: z.string().nullable(),
});
export type AttemptEntry = z.infer<typeof AttemptEntry>;

/** What `<work dir>/agent-state.json` keeps between runs (mode 0600: it holds the node key). */
export const AgentState = z.object({
  node_id: NodeId,
  node_key: z.string().min(1),
  gateway_url: z.string(),
  app_id: z.string(),
  pool_id: z.string(),
  slots: z.number().int().min(1),
  /** True while a drain that this agent asked for (on SIGTERM) is in force: lifted at the next start. */
  drained_by_agent: z.boolean().default(false),
  attempts: z.array(AttemptEntry).default([]),
});
export type AgentState = z.infer<typeof AgentState>;

export function attemptKey(entry: { job_id: string; attempt: number }): string {
  return `${entry.job_id}#${entry.attempt}`;
}

/** `attemptKey`'s inverse. */
export function parseAttemptKey(key: string): { job_id: string; attempt: number } {
  const hash = key.lastIndexOf("#");
  return { job_id: key.slice(0, hash), attempt: Number(key.slice(hash + 1)) };
}

/**
 * The state file: read once at start, then changed in memory and written through
 * (atomically: a temporary file renamed over the old one). Writes are queued so the
 * file always ends with the latest state; a burst of changes costs one or two writes.
 */
export class StateFile {
  private writing: Promise<void> = Promise.resolve();
  private dirty = false;

  private constructor(
    readonly path: string,
    private readonly state: AgentState,
    private readonly logger: Logger,
  ) {}

  /** The saved state, or null when there is none yet. */
  static async read(path: string): Promise<AgentState | null> {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw new AgentError(
        "agent.state_unreadable",
        `cannot read the state file ${path}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    try {
      return AgentState.parse(JSON.parse(text));
    } catch (error) {
      throw new AgentError(
        "agent.state_unreadable",
        `the state file ${path} is damaged (${(error as Error).message.split("\n")[0]}); move it away to register a new node`,
        { cause: error },
      );
    }
  }

  /** Writes `state` now and returns the file to keep changing it. */
  static async create(path: string, state: AgentState, logger: Logger): Promise<StateFile> {
    const file = new StateFile(path, state, logger);
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await file.save();
    return file;
  }

  get current(): Readonly<AgentState> {
    return this.state;
  }

  attempt(key: string): AttemptEntry | undefined {
    return this.state.attempts.find((entry) => attemptKey(entry) === key);
  }

  /** Applies `change` and writes the file; resolves once a write that includes it is done. */
  update(change: (state: AgentState) => void): Promise<void> {
    change(this.state);
    return this.save();
  }

  updateAttempt(key: string, change: (entry: AttemptEntry) => void): Promise<void> {
    return this.update((state) => {
      const entry = state.attempts.find((candidate) => attemptKey(candidate) === key);
      if (entry) change(entry);
    });
  }

  removeAttempt(key: string): Promise<void> {
    return this.update((state) => {
      state.attempts = state.attempts.filter((entry) => attemptKey(entry) !== key);
    });
  }

  /** Resolves once every change made so far is on disk. */
  flush(): Promise<void> {
    return this.writing.catch(() => undefined);
  }

  private save(): Promise<void> {
    this.dirty = true;
    const write = this.writing
      .catch(() => undefined)
      .then(async () => {
        if (!this.dirty) return;
        this.dirty = false;
        const temporary = `${this.path}.tmp`;
        await writeFile(temporary, `${JSON.stringify(this.state, null, 2)}\n`, { mode: 0o600 });
        // A temporary file left by a crash keeps its old mode: the key must never be readable by others.
        await chmod(temporary, 0o600);
        await rename(temporary, this.path);
      });
    this.writing = write.catch((error: unknown) => {
      this.logger.error({ error: (error as Error).message, path: this.path }, "cannot write the state file");
    });
    return write;
  }
}
