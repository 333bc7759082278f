import { connect, type NatsConnection } from "@nats-io/transport-node";
import { isAppError } from "../../shared/errors/index.js";
import { ADMIN_INBOX_PREFIX, natsAuthOptions, requestRpc } from "../../shared/nats/index.js";
import { ConfigError } from "../../shared/runtime/index.js";
import {
  askBootstrapPlan,
  BootstrapIncomplete,
  checkAdminPassword,
  describeBootstrap,
  loadBootstrapFile,
  runBootstrap,
} from "./bootstrap.js";
import { type Invocation, parseInvocation, resolveNatsUrl, withPassword } from "./commands.js";
import {
  describeConnectFailure,
  describePermissionFailure,
  permissionViolationOf,
  watchPermissionViolations,
} from "./nats-failure.js";
import { type PasswordIo, readPassword } from "./password-source.js";
import { PromptCancelled, TerminalPrompt, UsageError } from "../../shared/terminal/index.js";

/** An operator wants an answer, not a wait: a short timeout and no reconnects. */
const CONNECT_TIMEOUT_MS = 3000;

type Env = Record<string, string | undefined>;

/** What to send, with every input read and checked before NATS is contacted; it answers the record made and its line(s) of text. */
type Prepared = (nc: NatsConnection) => Promise<{ made: unknown; text: string }>;

async function prepare(invocation: Exclude<Invocation, { kind: "help" }>, io: PasswordIo): Promise<Prepared> {
  if (invocation.kind === "run") {
    const { command } = invocation;
    const body = invocation.password
      ? withPassword(command, invocation.body, await readPassword(invocation.password, io))
      : invocation.body;
    return async (nc) => {
      const made = await requestRpc(nc, command.rpc, body as never);
      return { made, text: command.describe(made) };
    };
  }
  const fromFile = invocation.file === undefined ? undefined : await loadBootstrapFile(invocation.file);
  if (fromFile && invocation.password && fromFile.password)
    throw new UsageError(
      `${invocation.file} names a password_file: give no --password-stdin or --password-file as well`,
    );
  if (!fromFile && !io.stdin.isTTY)
    throw new UsageError("bootstrap: give --file FILE, or run it on a terminal to be asked");
  if (!fromFile && invocation.password?.from === "stdin")
    throw new UsageError("bootstrap: --password-stdin needs --file FILE (stdin is then the password alone)");
  const plan = fromFile?.plan ?? (await askBootstrapPlan(io.prompt()));
  const password = await readPassword(invocation.password ?? fromFile?.password ?? { from: "prompt" }, io);
  checkAdminPassword(password);
  return async (nc) => {
    const made = await runBootstrap(nc, plan, password);
    return { made, text: describeBootstrap(made) };
  };
}

/** The operator CLI (`npm run admin -- <command>`). Exit codes: 0 done, 1 failed, 2 bad input, 130 cancelled at a prompt. */
async function runAdmin(argv: readonly string[], env: Env): Promise<number> {
  let terminal: TerminalPrompt | undefined;
  const io: PasswordIo = {
    stdin: process.stdin,
    prompt: () => (terminal ??= new TerminalPrompt(process.stdin, process.stderr)),
  };
  let invocation;
  let nats;
  let prepared: Prepared;
  try {
    invocation = parseInvocation(argv);
    if (invocation.kind === "help") {
      console.log(invocation.text);
      return 0;
    }
    nats = resolveNatsUrl(invocation.natsUrl, env);
    prepared = await prepare(invocation, io);
  } catch (error) {
    if (error instanceof PromptCancelled) {
      console.error(error.message);
      return 130;
    }
    if (!(error instanceof UsageError || error instanceof ConfigError)) throw error;
    console.error(error.message);
    return 2;
  } finally {
    terminal?.close();
  }

  let nc: NatsConnection;
  try {
    nc = await connect({
      ...natsAuthOptions(env),
      servers: nats.url.split(",").map((server) => server.trim()),
      name: "cjs-admin",
      // Replies come back on this prefix, so the operator's NATS user needs no rights on `_INBOX.>`.
      inboxPrefix: ADMIN_INBOX_PREFIX,
      timeout: CONNECT_TIMEOUT_MS,
      reconnect: false,
    });
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 2;
    }
    console.error(describeConnectFailure(error, nats, env, CONNECT_TIMEOUT_MS));
    return 1;
  }

  const violations = watchPermissionViolations(nc);
  try {
    const { made, text } = await prepared(nc);
    console.log(invocation.json ? JSON.stringify(made, null, 2) : text);
    return 0;
  } catch (error) {
    if (error instanceof BootstrapIncomplete) {
      if (invocation.json) console.log(JSON.stringify(error.created, null, 2));
      console.error(`error: ${error.message}`);
      return 1;
    }
    if (!isAppError(error)) throw error;
    // A user without the CLI's rights sees no answer: say which right NATS refused, not "did not answer".
    const refused = error.code === "service.unavailable" ? permissionViolationOf(error, violations) : undefined;
    if (refused) {
      console.error(`error: ${describePermissionFailure(refused, env)}`);
      return 1;
    }
    console.error(`error: ${error.code}: ${error.message}`);
    if (error.details !== undefined) console.error(JSON.stringify(error.details, null, 2));
    return 1;
  } finally {
    await nc.close();
  }
}

process.exitCode = await runAdmin(process.argv.slice(2), process.env);
