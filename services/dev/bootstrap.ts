import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { z } from "zod";
import { AppError } from "../../shared/errors/index.js";
import { requestRpc } from "../../shared/nats/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";

/** What `make dev` remembers between starts: the admin's business and login (the file is mode 0600). */
const DevAdminFile = z.object({
  business_id: z.string(),
  email: z.string(),
  password: z.string(),
});
type DevAdminFile = z.infer<typeof DevAdminFile>;

export interface DevLogin {
  appId: string;
  businessId: string;
  email: string;
  password: string;
  generated: boolean;
  /** Set when CJS_ADMIN_PASSWORD differs from the password made on first start (which still applies). */
  warning: string | undefined;
}

async function readAdminFile(path: string): Promise<DevAdminFile | null> {
  try {
    return DevAdminFile.parse(JSON.parse(await readFile(path, "utf8")));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new Error(`${path} is unreadable (${(error as Error).message}); delete the data dir to start over`, {
      cause: error,
    });
  }
}

function ignoreExisting(error: unknown): void {
  if (!(error instanceof AppError && error.code === "resource.already_exists")) throw error;
}

/**
 * Makes sure the dev app, a business and the admin user exist, through the same operator
 * commands `npm run admin` sends. Safe to run on every start: the admin is made once and
 * its login kept in the data dir.
 */
export async function bootstrapDev(
  nc: NatsConnection,
  options: { dataDir: string; appId: string; email: string; password: string | undefined },
): Promise<DevLogin> {
  const path = join(options.dataDir, "dev-admin.json");
  await requestRpc(nc, "adminAppCreate", { id: options.appId, name: "Local development" }).catch(ignoreExisting);

  const saved = await readAdminFile(path);
  if (saved && saved.email === options.email) {
    const warning =
      options.password !== undefined && options.password !== saved.password
        ? "CJS_ADMIN_PASSWORD differs from the admin password set on first start, which still applies (delete the data dir to start over)"
        : undefined;
    return {
      appId: options.appId,
      businessId: saved.business_id,
      email: saved.email,
      password: saved.password,
      generated: false,
      warning,
    };
  }

  const businessId =
    saved?.business_id ??
    (await requestRpc(nc, "adminBusinessCreate", { app_id: options.appId, name: "Local business", operator: true }))
      .business_id;
  const password = options.password ?? randomBase62(20);
  try {
    await requestRpc(nc, "adminUserCreate", {
      app_id: options.appId,
      business_id: businessId,
      email: options.email,
      password,
      role: "admin",
    });
  } catch (error) {
    if (error instanceof AppError && error.code === "resource.already_exists") {
      throw new Error(
        `the admin ${options.email} exists but ${path} with its password is gone; delete the data dir to start over`,
        { cause: error },
      );
    }
    throw error;
  }
  await writeFile(
    path,
    `${JSON.stringify({ business_id: businessId, email: options.email, password } satisfies DevAdminFile, null, 2)}\n`,
    { mode: 0o600 },
  );
  return {
    appId: options.appId,
    businessId,
    email: options.email,
    password,
    generated: options.password === undefined,
    warning: undefined,
  };
}
