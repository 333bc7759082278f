import { parseArgs } from "node:util";
import type { z } from "zod";
import {
  App,
  Business,
  CreateAppRequest,
  CreateBusinessRequest,
  CreateUserRequest,
  SetCreditRequest,
  SetCreditResponse,
  User,
} from "../../shared/contract/index.js";
import { subjects } from "../../shared/nats/index.js";
import { BaseConfig, formatPath, natsUrlProblem, parseConfig } from "../../shared/runtime/index.js";
import { rotateKeysCommand } from "./keys-commands.js";
import {
  PASSWORD_FLAGS,
  PASSWORD_ON_ARGV,
  PASSWORD_USAGE,
  passwordSourceOf,
  type PasswordSource,
} from "./password-source.js";
import { UsageError } from "./usage-error.js";
import { usersCommands } from "./users-commands.js";

export { UsageError };

/** A command-line flag and the request field it fills. */
interface Flag {
  flag: string;
  field: string;
  /** Placeholder shown in the usage text. */
  value: string;
}

/** One operator command: the words that name it, its flags, and the RPC it sends. */
export interface AdminCommand<Req extends z.ZodObject = z.ZodObject, Res extends z.ZodType = z.ZodType> {
  /** The words typed after `npm run admin --`, e.g. `app create`. */
  name: string;
  summary: string;
  /** In usage order. Whether a flag is optional comes from the request schema. */
  flags: readonly Flag[];
  /** The request's `password` comes from a password source (`--password-stdin`, `--password-file`, a prompt), never a flag. */
  takesPassword?: true;
  request: Req;
  subject: () => string;
  response: Res;
  /** The one line printed without `--json`. */
  describe(created: z.infer<Res>): string;
}

function defineCommand<Req extends z.ZodObject, Res extends z.ZodType>(
  command: AdminCommand<Req, Res>,
): AdminCommand<Req, Res> {
  return command;
}

export const ADMIN_COMMANDS: readonly AdminCommand[] = [
  defineCommand({
    name: "app create",
    summary: "Create an application (a tenant); clients send its id as X-App-ID.",
    flags: [
      { flag: "id", field: "id", value: "ID" },
      { flag: "name", field: "name", value: "NAME" },
    ],
    request: CreateAppRequest,
    subject: subjects.adminAppCreate,
    response: App,
    describe: (app) => `created app ${app.app_id} (${app.name})`,
  }),
  defineCommand({
    name: "business create",
    summary: "Create a business in an application; prints the business id.",
    flags: [
      { flag: "app", field: "app_id", value: "ID" },
      { flag: "name", field: "name", value: "NAME" },
      { flag: "operator", field: "operator", value: "true|false" },
    ],
    request: CreateBusinessRequest,
    subject: subjects.adminBusinessCreate,
    response: Business,
    describe: (business) =>
      `created ${business.operator ? "operator " : ""}business ${business.business_id} (${business.name}) in app ${business.app_id}`,
  }),
  defineCommand({
    name: "user create",
    summary: "Create a user of a business, who can then sign in with the password.",
    flags: [
      { flag: "app", field: "app_id", value: "ID" },
      { flag: "business", field: "business_id", value: "BID" },
      { flag: "email", field: "email", value: "EMAIL" },
      { flag: "role", field: "role", value: "admin|member" },
    ],
    takesPassword: true,
    request: CreateUserRequest,
    subject: subjects.adminUserCreate,
    response: User,
    describe: (user) =>
      `created user ${user.user_id} <${user.email}> (${user.role}) in business ${user.business_id} of app ${user.app_id}`,
  }),
  defineCommand({
    name: "credit set",
    summary: "Set a business's compute-credit balance to AMOUNT credits (a `set` entry in its ledger).",
    flags: [
      { flag: "business", field: "business_id", value: "BID" },
      { flag: "amount", field: "amount", value: "AMOUNT" },
    ],
    request: SetCreditRequest,
    subject: subjects.adminCreditSet,
    response: SetCreditResponse,
    describe: (set) =>
      `set the credit of business ${set.business_id} (app ${set.app_id}) to ${set.balance} (was ${set.previous_balance})`,
  }),
  rotateKeysCommand as AdminCommand,
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
  flags: ["[--file FILE]", PASSWORD_USAGE],
} as const;

const GLOBAL_OPTIONS = {
  json: { type: "boolean" },
  nats: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

function isBootstrap(command: AdminCommand | typeof BOOTSTRAP | undefined): command is typeof BOOTSTRAP {
  return command === BOOTSTRAP;
}

const BOOTSTRAP_OPTIONS = { file: { type: "string" }, ...PASSWORD_FLAGS } as const;

// Every command's flags are known to the first parse, so a value is never mistaken for a
// command word; flags that belong to another command are refused afterwards.
const ALL_OPTIONS = {
  ...Object.fromEntries(
    ADMIN_COMMANDS.flatMap((command) => command.flags.map(({ flag }) => [flag, { type: "string" } as const])),
  ),
  ...BOOTSTRAP_OPTIONS,
  ...GLOBAL_OPTIONS,
} as const;

function ownFlags(command: AdminCommand | typeof BOOTSTRAP): Set<string> {
  if (isBootstrap(command)) return new Set(Object.keys(BOOTSTRAP_OPTIONS));
  const { flags, takesPassword } = command;
  return new Set([...flags.map(({ flag }) => flag), ...(takesPassword ? Object.keys(PASSWORD_FLAGS) : [])]);
}

/** Turns argv (without node and the script) into the command to run and its validated request body. */
export function parseInvocation(argv: readonly string[]): Invocation {
  // Refused with the reason, with or without a value, before anything else is said.
  if (argv.some((arg) => arg === "--password" || arg.startsWith("--password="))) throw new UsageError(PASSWORD_ON_ARGV);
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: ALL_OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    if (isParseArgsError(error)) throw new UsageError(`${error.message}\n\n${usage()}`);
    throw error;
  }
  const { values, positionals } = parsed;
  const name = positionals.join(" ");
  const command = name === BOOTSTRAP.name ? BOOTSTRAP : ADMIN_COMMANDS.find((candidate) => candidate.name === name);

  if (values.help) return { kind: "help", text: usage(command) };
  if (!command) {
    throw new UsageError(`${name === "" ? "no command given" : `unknown command "${name}"`}\n\n${usage()}`);
  }

  const own = ownFlags(command);
  const foreign = Object.keys(values).filter((flag) => !own.has(flag) && !Object.hasOwn(GLOBAL_OPTIONS, flag));
  if (foreign.length > 0) {
    const flags = foreign.map((flag) => `--${flag}`).join(", ");
    const verb = foreign.length === 1 ? "is not an option" : "are not options";
    throw new UsageError(`${flags} ${verb} of "${command.name}"\n\n${usage(command)}`);
  }

  const globals = { json: values.json === true, natsUrl: values.nats };
  if (isBootstrap(command))
    return { kind: "bootstrap", file: values.file, password: passwordSourceOf(values, undefined), ...globals };

  const given = values as Record<string, string | boolean | undefined>;
  const body = Object.fromEntries(
    command.flags.filter(({ flag }) => given[flag] !== undefined).map(({ flag, field }) => [field, given[flag]]),
  );
  const result = requestWithoutPassword(command).safeParse(body);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const field = issue.path[0];
      const flag = command.flags.find((candidate) => candidate.field === field);
      if (!flag) return `${formatPath(issue.path) || "(request)"}: ${issue.message}`;
      return body[flag.field] === undefined ? `--${flag.flag} is required` : `--${flag.flag}: ${issue.message}`;
    });
    throw new UsageError(
      `invalid input for "${command.name}":\n${problems.map((problem) => `  ${problem}`).join("\n")}\n\n${usage(command)}`,
    );
  }

  const password = command.takesPassword ? passwordSourceOf(values, { from: "prompt" }) : undefined;
  return { kind: "run", command, body: result.data, password, ...globals };
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

/** `--nats`, else `NATS_URL`, else the default every service uses (the server `make dev` starts). */
export function resolveNatsUrl(flag: string | undefined, env: Record<string, string | undefined>): string {
  if (flag === undefined) return parseConfig(BaseConfig.pick({ NATS_URL: true }), env).NATS_URL;
  const problem = natsUrlProblem(flag);
  if (problem !== undefined) throw new UsageError(`--nats: ${problem}`);
  return flag;
}

/** The usage of one command, or of the whole CLI. */
export function usage(command?: AdminCommand | typeof BOOTSTRAP): string {
  const lines = ["Usage: npm run admin -- <command> [options]", "", command ? "Command:" : "Commands:"];
  if (command === undefined || isBootstrap(command))
    lines.push(`  ${[BOOTSTRAP.name, ...BOOTSTRAP.flags].join(" ")}`, `      ${BOOTSTRAP.summary}`);
  const commands = command === undefined ? ADMIN_COMMANDS : isBootstrap(command) ? [] : [command];
  for (const each of commands) {
    const flags = each.flags.map(({ flag, field, value }) => {
      const text = `--${flag} ${value}`;
      return isOptional(each.request, field) ? `[${text}]` : text;
    });
    if (each.takesPassword) flags.push(PASSWORD_USAGE);
    lines.push(`  ${[each.name, ...flags].join(" ")}`, `      ${each.summary}`);
  }
  lines.push(
    "",
    "Options:",
    "  --json       print only the created record, as JSON",
    "  --password-stdin     read the password from the first line of stdin",
    "  --password-file PATH read the password from the first line of PATH",
    "                       (neither: asked twice on the terminal, not echoed)",
    `  --nats URL   NATS server (default: $NATS_URL, else ${resolveNatsUrl(undefined, {})})`,
    "  -h, --help   show this help",
  );
  return lines.join("\n");
}

function isOptional(request: z.ZodObject, field: string): boolean {
  return request.shape[field]?.safeParse(undefined).success ?? true;
}

function isParseArgsError(error: unknown): error is Error {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === "string" && code.startsWith("ERR_PARSE_ARGS");
}
