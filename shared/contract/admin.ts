import { z } from "zod";
import { Email, Role, Timestamp } from "./common.js";
import { AppId, BusinessId } from "./ids.js";

/** Operator commands: they travel over NATS only (see `npm run admin`), never over HTTP. */
export const CreateAppRequest = z.strictObject({
  id: AppId,
  name: z.string().trim().min(1).max(200),
});
export type CreateAppRequest = z.infer<typeof CreateAppRequest>;

export const App = z.object({ app_id: AppId, name: z.string(), created_at: Timestamp });
export type App = z.infer<typeof App>;

export const CreateBusinessRequest = z.strictObject({
  app_id: AppId,
  name: z.string().trim().min(1).max(200),
  /** The operator's own business: its admins may add nodes to the operator pools, which serve every business. */
  operator: z.union([z.boolean(), z.stringbool()]).default(false),
});
export type CreateBusinessRequest = z.infer<typeof CreateBusinessRequest>;

export const Business = z.object({
  business_id: z.string(),
  app_id: AppId,
  name: z.string(),
  operator: z.boolean().default(false),
  created_at: Timestamp,
});
export type Business = z.infer<typeof Business>;

export const CreateUserRequest = z.strictObject({
  app_id: AppId,
  business_id: BusinessId,
  email: Email,
  password: z.string().min(12, "at least 12 characters").max(1024),
  role: Role.default("member"),
});
export type CreateUserRequest = z.infer<typeof CreateUserRequest>;

export const User = z.object({
  user_id: z.string(),
  app_id: AppId,
  business_id: z.string(),
  email: z.string(),
  role: Role,
  created_at: Timestamp,
});
export type User = z.infer<typeof User>;
