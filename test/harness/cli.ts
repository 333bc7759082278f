import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { programArgs } from "./programs.js";

/** `cjs` as its bin runs it: clients/cli/main.ts under node (with tsx). */
export const CLI_MAIN = join(import.meta.dirname, "../../clients/cli/main.ts");

/** How a run of `cjs` ended. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  configDir: string;
  env?: Record<string, string>;
  /** Its stdin. */
  input?: string;
  onStdout?: (text: string) => void;
  /** Called with everything on stderr so far, each time more arrives. */
  onStderr?: (text: string) => void;
  /** Ends the run (SIGTERM) when it aborts; its `code` is then null. */
  signal?: AbortSignal;
}

/**
 * Runs the real `cjs` against one gateway and app, each run in a config dir of its own
 * (made by `freshConfigDir`, removed by `cleanUp`) and with none of the caller's `CJS_`
 * settings.
 */
export class CliRunner {
  private readonly dirs: string[] = [];

  constructor(private readonly target: { baseUrl: string; appId: string }) {}

  /** A config dir no run has used (`$CJS_CONFIG_DIR`, not yet made: `cjs login` makes it 0700). */
  freshConfigDir(): string {
    return join(this.workDir(), "cjs");
  }

  /** An empty temporary directory, removed by `cleanUp`. */
  workDir(): string {
    const dir = mkdtempSync(join(tmpdir(), "cjs-cli-"));
    this.dirs.push(dir);
    return dir;
  }

  /** The environment of a run: none of the caller's CJS_ settings, this stack's address. */
  env(configDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith("CJS_") && name !== "FORCE_COLOR"),
    );
    return {
      ...inherited,
      NO_COLOR: "1",
      CJS_CONFIG_DIR: configDir,
      CJS_URL: this.target.baseUrl,
      CJS_APP_ID: this.target.appId,
      ...extra,
    };
  }

  /** Runs `cjs args…` to its end. */
  run(args: string[], options: CliOptions): Promise<CliRun> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [...programArgs(CLI_MAIN), ...args], {
        env: this.env(options.configDir, options.env),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
        options.onStdout?.(stdout);
      });
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        options.onStderr?.(stderr);
      });
      child.on("error", (error) => {
        if (!options.signal?.aborted) reject(error);
      });
      child.on("close", (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(options.input ?? "");
    });
  }

  /** A config dir signed in as the user with `cjs login --password-stdin`; throws with its stderr when it fails. */
  async loggedIn(user: { email: string; password: string }): Promise<string> {
    const configDir = this.freshConfigDir();
    const login = await this.run(["login", "--email", user.email, "--password-stdin"], {
      configDir,
      input: `${user.password}\n`,
    });
    if (login.code !== 0) throw new Error(`cjs login exited ${login.code}: ${login.stderr}`);
    return configDir;
  }

  cleanUp(): void {
    for (const dir of this.dirs) rmSync(dir, { recursive: true, force: true });
  }
}
