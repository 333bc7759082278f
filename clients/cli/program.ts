import { Command, CommanderError } from "commander";
import { registerArtifactCommands } from "./commands/artifacts.js";
import { registerAuthCommands } from "./commands/auth.js";
import { registerBillingCommands } from "./commands/billing.js";
import { registerCompletionCommand } from "./commands/completion.js";
import { registerJobCommands } from "./commands/jobs.js";
import { registerKeyCommands } from "./commands/keys.js";
import { registerNodeCommands } from "./commands/nodes.js";
import { registerScheduleCommands } from "./commands/schedules.js";
import { registerAccountCommands, registerUserCommands } from "./commands/users.js";
import { registerWebhookCommands } from "./commands/webhooks.js";
import { colorsFor, type CliIo } from "./output.js";
import { ApiError } from "../sdk/src/index.js";
import { EXIT, exitCodeOf, SignedOut, UsageError } from "./exit-codes.js";
import { runnerFor } from "./run.js";
import { CLI_VERSION } from "./version.js";

/** The whole command tree of `cjs`, writing to `io`. */
export function buildProgram(io: CliIo, setExit: (code: number) => void): Command {
  const program = new Command("cjs")
    .description("The compute job service from the command line: jobs, logs, artifacts, API keys, nodes, billing")
    .option("--url <url>", "the gateway (default: CJS_URL, the signed-in session's, or http://localhost:8080)")
    .option("--app <id>", "the application id, sent as X-App-ID (default: CJS_APP_ID, the session's, or local)")
    .option("--json", "print JSON for scripts instead of tables")
    .version(CLI_VERSION, "--version", "print the version of cjs")
    .showHelpAfterError("(add --help for usage)")
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .exitOverride();
  const run = runnerFor(io);
  registerAuthCommands(program, run);
  registerJobCommands(program, run, setExit);
  registerArtifactCommands(program, run);
  registerKeyCommands(program, run);
  registerNodeCommands(program, run);
  registerBillingCommands(program, run);
  registerAccountCommands(program, run);
  registerUserCommands(program, run);
  registerWebhookCommands(program, run);
  registerScheduleCommands(program, run);
  registerCompletionCommand(program);
  for (const command of allCommands(program)) command.exitOverride().configureOutput(program.configureOutput());
  return program;
}

function allCommands(command: Command): Command[] {
  return command.commands.flatMap((sub) => [sub, ...allCommands(sub)]);
}

/** Runs `cjs` with `argv` (without node and the script); answers the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let exitCode: number = EXIT.ok;
  const program = buildProgram(io, (code) => (exitCode = code));
  try {
    await program.parseAsync(argv, { from: "user" });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are answers, not failures; everything else commander refuses is a usage error.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    report(io, error);
    return exitCodeOf(error);
  }
}

function report(io: CliIo, error: unknown): void {
  const colors = colorsFor({ ...io, stdout: io.stderr });
  if (error instanceof ApiError) {
    io.stderr.write(
      `${colors.red("error")} ${error.code}: ${error.message}${error.requestId ? colors.dim(` (request ${error.requestId})`) : ""}\n`,
    );
    const issues = error.details?.issues;
    if (Array.isArray(issues))
      for (const issue of issues as Array<{ path?: string; message?: string }>)
        io.stderr.write(`  ${issue.path || "(body)"}: ${issue.message}\n`);
    return;
  }
  if (error instanceof UsageError) {
    io.stderr.write(`${colors.red("error")} ${error.message}\n`);
    return;
  }
  if (error instanceof SignedOut) {
    io.stderr.write(`${colors.red("error")} ${error.message} ${colors.dim(`(${error.reason})`)}\n`);
    return;
  }
  io.stderr.write(`${colors.red("error")} ${error instanceof Error ? error.message : String(error)}\n`);
}
