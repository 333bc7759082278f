#!/usr/bin/env node
import { runCli } from "./program.js";

/** `cjs`: the command-line client (docs/cli.md). */
const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});
// Let stdout drain (a piped `--json` answer) before leaving.
process.exitCode = code;
