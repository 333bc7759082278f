import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { z } from "zod";
import {
  App,
  Business,
  CreateAppRequest,
  CreateBusinessRequest,
  CreateUserRequest,
  User,
} from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { requestRpc } from "../../shared/nats/index.js";
import { formatPath } from "../../shared/runtime/index.js";
import type { PasswordSource } from "./password-source.js";
import type { TerminalPrompt } from "../../shared/terminal/index.js";
import { UsageError } from "../../shared/terminal/index.js";

/**
 * What `bootstrap --file` reads. The password is never in it: `password_file` names a file
 * whose first line is the password (relative to this file's folder).
 */
export const BootstrapFile = z.strictObject({
  app_id: CreateAppRequest.shape.id,
  app_name: CreateAppRequest.shape.name,
  operator_business_name: CreateBusinessRequest.shape.name,
  admin_email: CreateUserRequest.shape.email,
  password_file: z.string().min(1).optional(),
});
export type BootstrapFile = z.infer<typeof BootstrapFile>;

export type BootstrapPlan = Omit<BootstrapFile, "password_file">;

export interface Bootstrapped {
  app: App;
  business: Business;
  admin: User;
}

function problemsOf(error: z.ZodError): string {
  return error.issues.map((issue) => `  ${formatPath(issue.path) || "(file)"}: ${issue.message}`).join("\n");
}

/** Reads and checks a bootstrap file; every problem is a `UsageError` naming the file. */
export async function loadBootstrapFile(
  path: string,
): Promise<{ plan: BootstrapPlan; password: PasswordSource | undefined }> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new UsageError(`--file: cannot read ${path} as JSON (${reason})`);
  }
  if (raw !== null && typeof raw === "object" && Object.hasOwn(raw, "password")) {
    throw new UsageError(
      `${path}: "password" is refused: a password is not kept in a file of settings. Name a file holding it with "password_file", or use --password-stdin or the prompt`,
    );
  }
  const parsed = BootstrapFile.safeParse(raw);
  if (!parsed.success) throw new UsageError(`${path} is not a valid bootstrap file:\n${problemsOf(parsed.error)}`);
  const { password_file: passwordFile, ...plan } = parsed.data;
  const password =
    passwordFile === undefined
      ? undefined
      : { from: "file" as const, path: resolve(dirname(path), passwordFile), setting: `${path}: password_file` };
  return { plan, password };
}

/** Asks for each field until the schema accepts the answer. */
export async function askBootstrapPlan(prompt: TerminalPrompt): Promise<BootstrapPlan> {
  const ask = async <T extends z.ZodType>(question: string, schema: T): Promise<z.infer<T>> => {
    for (;;) {
      const parsed = schema.safeParse(await prompt.ask(question));
      if (parsed.success) return parsed.data;
      prompt.say(`  ${parsed.error.issues[0]?.message ?? "not valid"}`);
    }
  };
  const shape = BootstrapFile.shape;
  return {
    app_id: await ask("Application id (clients send it as X-App-ID): ", shape.app_id),
    app_name: await ask("Application name: ", shape.app_name),
    operator_business_name: await ask("Operator business name: ", shape.operator_business_name),
    admin_email: await ask("Admin e-mail: ", shape.admin_email),
  };
}

/** Checks the password against the user schema before anything is created. */
export function checkAdminPassword(password: string): void {
  const parsed = CreateUserRequest.shape.password.safeParse(password);
  if (!parsed.success) throw new UsageError(`password: ${parsed.error.issues[0]?.message ?? "not valid"}`);
}

/** Bootstrap stopped after creating `created`: the message says what is left to do by hand. */
export class BootstrapIncomplete extends Error {
  constructor(
    message: string,
    readonly created: Partial<Bootstrapped>,
    cause: AppError,
  ) {
    super(message, { cause });
    this.name = "BootstrapIncomplete";
  }
}

/**
 * Creates the application, its operator business and an admin, in that order, with the
 * operator commands. An application that exists already stops it before anything is
 * created: bootstrap makes a new system and never a second operator business or admin.
 */
export async function runBootstrap(nc: NatsConnection, plan: BootstrapPlan, password: string): Promise<Bootstrapped> {
  let app: App;
  try {
    app = await requestRpc(nc, "adminAppCreate", { id: plan.app_id, name: plan.app_name });
  } catch (error) {
    if (error instanceof AppError && error.code === "resource.already_exists") {
      throw new BootstrapIncomplete(
        `application ${plan.app_id} exists already, so this system is bootstrapped (or an earlier bootstrap stopped part way): nothing was created. ` +
          `Add an operator business or admin to it with "business create --operator" and "user create --role admin".`,
        {},
        error,
      );
    }
    throw error;
  }
  let business: Business;
  try {
    business = await requestRpc(nc, "adminBusinessCreate", {
      app_id: app.app_id,
      name: plan.operator_business_name,
      operator: true,
    });
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    throw new BootstrapIncomplete(
      `created application ${app.app_id} but not its operator business (${error.code}: ${error.message}). Finish with ` +
        `"business create --app ${app.app_id} --name NAME --operator", then "user create ... --role admin".`,
      { app },
      error,
    );
  }
  try {
    const admin = await requestRpc(nc, "adminUserCreate", {
      app_id: app.app_id,
      business_id: business.business_id,
      email: plan.admin_email,
      password,
      role: "admin",
    });
    return { app, business, admin };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    throw new BootstrapIncomplete(
      `created application ${app.app_id} and operator business ${business.business_id} but not the admin (${error.code}: ${error.message}). Finish with ` +
        `"user create --app ${app.app_id} --business ${business.business_id} --email EMAIL --role admin".`,
      { app, business },
      error,
    );
  }
}

/** The lines printed without `--json`. */
export function describeBootstrap({ app, business, admin }: Bootstrapped): string {
  return [
    `created app ${app.app_id} (${app.name})`,
    `created operator business ${business.business_id} (${business.name}), not billed`,
    `created admin ${admin.user_id} <${admin.email}>: sign in with X-App-ID ${app.app_id}`,
  ].join("\n");
}
