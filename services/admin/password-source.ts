import { readFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { UsageError } from "../../shared/terminal/index.js";
import type { TerminalPrompt } from "../../shared/terminal/index.js";

/** Where a password comes from: never the command line, where `ps` and shell history show it. */
export type PasswordSource = { from: "stdin" } | { from: "file"; path: string; setting?: string } | { from: "prompt" };

export const PASSWORD_USAGE = "[--password-stdin | --password-file PATH]";

export const PASSWORD_ON_ARGV =
  "--password is refused: a password on the command line is visible to every user of the machine (ps) and stays in shell history. " +
  "Use --password-stdin (the first line of stdin), --password-file PATH (its first line), or neither to be asked on the terminal.";

/** The source `--password-stdin` and `--password-file` name; `fallback` when neither is given. Both at once is a usage error. */
export function passwordSourceOf(
  flags: { passwordStdin?: boolean | undefined; passwordFile?: string | undefined },
  fallback: PasswordSource | undefined,
): PasswordSource | undefined {
  const stdin = flags.passwordStdin === true;
  const path = flags.passwordFile;
  if (stdin && path !== undefined)
    throw new UsageError("--password-stdin and --password-file exclude each other: give one");
  if (stdin) return { from: "stdin" };
  if (path !== undefined) return { from: "file", path };
  return fallback;
}

function firstLine(text: string): string {
  return text.split(/\r?\n/, 1)[0] ?? "";
}

/** The first line, then stdin is let go: a writer that keeps the pipe open must not hold the CLI. */
async function readFirstLineOfStdin(
  stdin: NodeJS.ReadableStream & { destroy?: () => void },
): Promise<string | undefined> {
  const lines = createInterface({ input: stdin, crlfDelay: Infinity });
  try {
    for await (const line of lines) return line;
    return undefined;
  } finally {
    stdin.destroy?.();
  }
}

export interface PasswordIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Made on first use, and only on a terminal. */
  prompt: () => TerminalPrompt;
}

/** Reads the password from its source. An unusable source is a `UsageError` (exit 2) that names it. */
export async function readPassword(source: PasswordSource, io: PasswordIo): Promise<string> {
  let password: string | undefined;
  switch (source.from) {
    case "stdin":
      password = await readFirstLineOfStdin(io.stdin);
      if (!password) throw new UsageError("--password-stdin: stdin had no password on its first line");
      return password;
    case "file":
      try {
        password = firstLine(await readFile(source.path, "utf8"));
      } catch (error) {
        throw new UsageError(
          `${source.setting ?? "--password-file"}: cannot read ${source.path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
        );
      }
      if (!password)
        throw new UsageError(`${source.setting ?? "--password-file"}: the first line of ${source.path} is empty`);
      return password;
    case "prompt": {
      if (!io.stdin.isTTY) {
        throw new UsageError(
          "no password given, and stdin is not a terminal to ask on: use --password-stdin or --password-file PATH",
        );
      }
      const prompt = io.prompt();
      password = await prompt.askSecret("Password: ");
      if ((await prompt.askSecret("Password again: ")) !== password)
        throw new UsageError("the two passwords differ; nothing was sent");
      return password;
    }
  }
}
