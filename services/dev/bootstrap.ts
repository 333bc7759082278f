import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { z } from "zod";
import { App, Business, User } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { requestRpc, subjects } from "../../shared/nats/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";

/** What `make dev` remembers between starts: the admin's business and login. */
const DevAdminFile = z.object({
  business_id: z.string(),
  email: z.string(),
  /** Only when it was generated here; a CJS_ADMIN_PASSWORD is never written down. */
  generated_password: z.string().optional(),
});
type DevAdminFile = z.infer<typeof DevAdminFile>;

export interface DevLogin {
  appId: string;
  businessId: string;
  email: string;
  password: string;
  passwordSource: "generated" | "CJS_ADMIN_PASSWORD";
}

async function readAdminFile(path: string): Promise<DevAdminFile | null> {
  try {
    return DevAdminFile.parse(JSON.parse(await readFile(path, "utf8")));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new Error(`${path} is unreadable (${(error as Error).message}); delete it to make a new admin`);
  }
}

function ignoreExisting(error: unknown): void {
  if (!(error instanceof AppError && error.code === "resource.already_exists")) throw error;
}

/**
 * Makes sure the dev app, a business and the admin user exist, through the same operator
 * commands `npm run admin` sends. Safe to run on every start.
 */
export async function bootstrapDev(
  nc: NatsConnection,
  options: { dataDir: string; appId: string; email: string; password: string | undefined },
): Promise<DevLogin> {
  const path = join(options.dataDir, "dev-admin.json");
  await requestRpc(nc, subjects.adminAppCreate(), { id: options.appId, name: "Local development" }, App).catch(ignoreExisting);

  const saved = await readAdminFile(path);
  if (saved && saved.email === options.email && (options.password !== undefined || saved.generated_password !== undefined)) {
    return {
      appId: options.appId,
      businessId: saved.business_id,
      email: saved.email,
      password: options.password ?? (saved.generated_password as string),
      passwordSource: options.password !== undefined ? "CJS_ADMIN_PASSWORD" : "generated",
    };
  }

  const businessId =
    saved?.business_id ?? (await requestRpc(nc, subjects.adminBusinessCreate(), { app_id: options.appId, name: "Local business" }, Business)).business_id;
  const password = options.password ?? randomBase62(20);
  await requestRpc(nc, subjects.adminUserCreate(), { app_id: options.appId, business_id: businessId, email: options.email, password, role: "admin" }, User);
  const record: DevAdminFile = { business_id: businessId, email: options.email, ...(options.password === undefined ? { generated_password: password } : {}) };
  await writeFile(path, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  return { appId: options.appId, businessId, email: options.email, password, passwordSource: options.password === undefined ? "generated" : "CJS_ADMIN_PASSWORD" };
}
