import { Command, CommanderError, type Option } from "commander";
import { z } from "zod";
import { formatPath, localNatsUrl, NatsPort, NatsUrl, parseConfig } from "../../shared/runtime/index.js";
import { UsageError } from "../../shared/terminal/index.js";
import { type AdminCommand, defineCommand } from "./admin-command.js";
import { rotateKeysCommand } from "./keys-commands.js";
import { PASSWORD_ON_ARGV, PASSWORD_USAGE, passwordSourceOf, type PasswordSource } from "./password-source.js";
import { usersCommands } from "./users-commands.js";

export const ADMIN_COMMANDS: readonly AdminCommand[] = [
  defineCommand({
    name: "app create",
    summary: "Create an application (a tenant); clients send its id as X-App-ID.",
    flags: [
      { flag: "id", field: "id", value: "ID", help: "the application id, sent as X-App-ID" },
      { flag: "name", field: "name", value: "NAME", help: "its name" },
    ],
    rpc: "adminAppCreate",
    describe: (app) => `created app ${app.app_id} (${app.name})`,
  }),
  defineCommand({
    name: "business create",
    summary: "Create a business in an application; prints the business id.",
    flags: [
      { flag: "app", field: "app_id", value: "ID", help: "the application" },
      { flag: "name", field: "name", value: "NAME", help: "its name" },
      {
        flag: "operator",
        field: "operator",
        help: "the operator's own business: not billed, and its admins add nodes to the operator pools",
      },
    ],
    rpc: "adminBusinessCreate",
    describe: (business) =>
      `created ${business.operator ? "operator " : ""}business ${business.business_id} (${business.name}) in app ${business.app_id}`,
  }),
  defineCommand({
    name: "user create",
    summary: "Create a user of a business, who can then sign in with the password.",
    flags: [
      { flag: "app", field: "app_id", value: "ID", help: "the application" },
      { flag: "business", field: "business_id", value: "BID", help: "the business (biz_…)" },
      { flag: "email", field: "email", value: "EMAIL", help: "the e-mail the user signs in with" },
      { flag: "role", field: "role", value: "admin|member", help: "the role in the business" },
    ],
    takesPassword: true,
    rpc: "adminUserCreate",
    describe: (user) =>
      `created user ${user.user_id} <${user.email}> (${user.role}) in business ${user.business_id} of app ${user.app_id}`,
  }),
  defineCommand({
    name: "credit set",
    summary: "Set a business's compute-credit balance to AMOUNT credits (a `set` entry in its ledger).",
    flags: [
      { flag: "business", field: "business_id", value: "BID", help: "the business (biz_…)" },
      { flag: "amount", field: "amount", value: "AMOUNT", help: "the new balance, in credits" },
    ],
    rpc: "adminCreditSet",
    describe: (set) =>
      `set the credit of business ${set.business_id} (app ${set.app_id}) to ${set.balance} (was ${set.previous_balance})`,
  }),
  rotateKeysCommand,
  ...usersCommands,
];

/**
 * `run`: one operator command; its body is complete except for the password, which is
 * read from `password` when the command takes one. `bootstrap`: the first app, operator
 * business and admin, from `file` or prompts.
 */
export type Invocation =
  | { kind: "help"; text: string }
  | {
      kind: "run";
      command: AdminCommand;
      body: Record<string, unknown>;
      password: PasswordSource | undefined;
      json: boolean;
      natsUrl: string | undefined;
    }
  | {
      kind: "bootstrap";
      file: string | undefined;
      password: PasswordSource | undefined;
      json: boolean;
      natsUrl: string | undefined;
    };

export const BOOTSTRAP = {
  name: "bootstrap",
  summary:
    "Create the first application, its operator business (not billed) and an admin of it, from FILE or by asking on the terminal.",
  usage: `[--file FILE] ${PASSWORD_USAGE}`,
} as const;

/** The usage line of a command: each flag with its value, optional ones in brackets as the request schema says. */
function usageLine(command: AdminCommand): string {
  const flags = command.flags.map(({ flag, field, value }) => {
    const text = value === undefined ? `--${flag}` : `--${flag} ${value}`;
    return isOptional(command.request, field) ? `[${text}]` : text;
  });
  if (command.takesPassword) flags.push(PASSWORD_USAGE);
  return flags.join(" ");
}

function isOptional(request: z.ZodObject, field: string): boolean {
  return request.shape[field]?.safeParse(undefined).success ?? true;
}

function addPasswordOptions(command: Command): Command {
  return command
    .option("--password-stdin", "read the password from the first line of stdin")
    .option("--password-file <PATH>", "read the password from the first line of PATH");
}

/** What the parse chose, filled in by the action commander runs. */
type Chosen = { invocation?: Invocation };

function globalsOf(command: Command): { json: boolean; natsUrl: string | undefined } {
  const globals = command.optsWithGlobals<{ json?: boolean; nats?: string }>();
  return { json: globals.json === true, natsUrl: globals.nats };
}

/** The request body from the flags given, checked with the command's schema; every problem is listed. */
function bodyOf(command: AdminCommand, options: ReadonlyMap<string, Option>, values: Command): Record<string, unknown> {
  const given = command.flags.flatMap(({ flag, field }) => {
    const value = values.getOptionValue(options.get(flag)!.attributeName()) as unknown;
    return value === undefined ? [] : [[field, value] as const];
  });
  const body = Object.fromEntries(given);
  const result = requestWithoutPassword(command).safeParse(body);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const field = issue.path[0];
    const flag = command.flags.find((candidate) => candidate.field === field);
    if (!flag) return `${formatPath(issue.path) || "(request)"}: ${issue.message}`;
    return body[flag.field] === undefined ? `--${flag.flag} is required` : `--${flag.flag}: ${issue.message}`;
  });
  throw new UsageError(
    `invalid input for "${command.name}":\n${problems.map((problem) => `  ${problem}`).join("\n")}\n\n${values.helpInformation()}`,
  );
}

/** The command tree: one sub-command per operator command (`app create`, …), and `bootstrap`. */
function buildProgram(chosen: Chosen, output: { text: string }): Command {
  const program = new Command("npm run admin --")
    .description("The operator CLI: applications, businesses, users, credit and signing keys, over NATS")
    .option("--json", "print only the created record, as JSON")
    .option(
      "--nats <URL>",
      `the NATS server (default: $NATS_URL, else ${localNatsUrl(NatsPort.parse(undefined))} or the port in $CJS_NATS_PORT, as make dev)`,
    )
    .helpOption("-h, --help", "show this help")
    .addHelpCommand(false)
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (text) => (output.text += text), writeErr: (text) => (output.text += text) });
  const groups = new Map<string, Command>();
  const group = (word: string) => {
    let found = groups.get(word);
    if (found === undefined) {
      const verbs = ADMIN_COMMANDS.filter(({ name }) => name.startsWith(`${word} `)).map(({ name }) =>
        name.slice(word.length + 1),
      );
      found = program.command(word).description(verbs.join(", ")).addHelpCommand(false);
      groups.set(word, found);
    }
    return found;
  };
  program.addHelpText("after", `\nEvery command:\n${commandList()}`);

  for (const command of ADMIN_COMMANDS) {
    const [first, second] = command.name.split(" ") as [string, string];
    const sub = group(first).command(second).description(command.summary).usage(usageLine(command));
    const options = new Map<string, Option>();
    for (const flag of command.flags) {
      sub.option(flag.value === undefined ? `--${flag.flag}` : `--${flag.flag} <${flag.value}>`, flag.help);
      options.set(flag.flag, sub.options.at(-1)!);
    }
    if (command.takesPassword) addPasswordOptions(sub);
    sub.action(() => {
      const body = bodyOf(command, options, sub);
      const flags = sub.opts<{ passwordStdin?: boolean; passwordFile?: string }>();
      const password = command.takesPassword ? passwordSourceOf(flags, { from: "prompt" }) : undefined;
      chosen.invocation = { kind: "run", command, body, password, ...globalsOf(sub) };
    });
  }

  const bootstrap = program.command(BOOTSTRAP.name).description(BOOTSTRAP.summary).usage(BOOTSTRAP.usage);
  addPasswordOptions(bootstrap.option("--file <FILE>", "the bootstrap file (JSON; see docs/operations.md)"));
  bootstrap.action(() => {
    const flags = bootstrap.opts<{ file?: string; passwordStdin?: boolean; passwordFile?: string }>();
    chosen.invocation = {
      kind: "bootstrap",
      file: flags.file,
      password: passwordSourceOf(flags, undefined),
      ...globalsOf(bootstrap),
    };
  });
  // Every command and group shares the program's output and its errors-as-exceptions.
  for (const each of [...groups.values(), ...[...groups.values()].flatMap((one) => one.commands), bootstrap])
    each.exitOverride().configureOutput(program.configureOutput()).showHelpAfterError();
  return program;
}

/**
 * Turns argv (without node and the script) into the command to run and its validated
 * request body, with commander (as `cjs`): unknown commands and flags, a flag without its
 * value and every schema problem are a `UsageError` with the usage of the command.
 */
export function parseInvocation(argv: readonly string[]): Invocation {
  // Refused with the reason, with or without a value, before anything else is said.
  if (argv.some((arg) => arg === "--password" || arg.startsWith("--password="))) throw new UsageError(PASSWORD_ON_ARGV);
  const chosen: Chosen = {};
  const output = { text: "" };
  const program = buildProgram(chosen, output);
  if (argv.length === 0) throw new UsageError(`no command given\n\n${program.helpInformation()}`);
  try {
    program.parse([...argv], { from: "user" });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (error.exitCode === 0) return { kind: "help", text: output.text.trimEnd() };
    throw new UsageError(output.text.trimEnd());
  }
  if (chosen.invocation === undefined) throw new UsageError(`no command given\n\n${program.helpInformation()}`);
  return chosen.invocation;
}

/** What the command line must fill: the request, less the password a command reads from its source. */
function requestWithoutPassword(command: AdminCommand): z.ZodObject {
  return command.takesPassword ? command.request.omit({ password: true }) : command.request;
}

/** The complete request once the password is read: a password the schema refuses is a usage error. */
export function withPassword(
  command: AdminCommand,
  body: Record<string, unknown>,
  password: string,
): Record<string, unknown> {
  const result = command.request.safeParse({ ...body, password });
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `  ${formatPath(issue.path) || "(request)"}: ${issue.message}`);
  throw new UsageError(`invalid input for "${command.name}":\n${problems.join("\n")}`);
}

/** The NATS settings `make dev` reads: NATS_URL, else its own server on CJS_NATS_PORT. */
const NatsSettings = z.object({ NATS_URL: NatsUrl.optional(), CJS_NATS_PORT: NatsPort });

/**
 * The NATS server: `--nats`, else `NATS_URL`, else the one `make dev` starts on this machine
 * (`CJS_NATS_PORT`, 4222 by default), so the CLI finds the same server as `make dev` with
 * the same settings. `local` says the last: the one a connect failure names `make dev` for.
 */
export function resolveNatsUrl(
  flag: string | undefined,
  env: Record<string, string | undefined>,
): { url: string; local: boolean } {
  if (flag !== undefined) {
    const parsed = NatsUrl.safeParse(flag);
    if (!parsed.success) throw new UsageError(`--nats: ${parsed.error.issues[0]?.message ?? "not a NATS URL"}`);
    return { url: flag, local: false };
  }
  const settings = parseConfig(NatsSettings, env);
  if (settings.NATS_URL !== undefined) return { url: settings.NATS_URL, local: false };
  return { url: localNatsUrl(settings.CJS_NATS_PORT), local: true };
}

/** Each command with its usage line and summary, as the whole CLI's help ends. */
function commandList(): string {
  return [
    ...ADMIN_COMMANDS.map((command) => `  ${command.name} ${usageLine(command)}\n      ${command.summary}`),
    `  ${BOOTSTRAP.name} ${BOOTSTRAP.usage}\n      ${BOOTSTRAP.summary}`,
  ].join("\n");
}

/** The usage of the whole CLI. */
export function usage(): string {
  const output = { text: "" };
  buildProgram({}, output).outputHelp();
  return output.text;
}
