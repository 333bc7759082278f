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
  operator: z.boolean().default(false),
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

/** The rule for every password a user sets: at creation, change, reset or after an invitation. */
export const NewPassword = z.string().min(12, "at least 12 characters").max(1024);

export const CreateUserRequest = z.strictObject({
  app_id: AppId,
  business_id: BusinessId,
  email: Email,
  password: NewPassword,
  role: Role.default("member"),
});
export type CreateUserRequest = z.infer<typeof CreateUserRequest>;

/**
 * `active`: may sign in and act. `invited`: made by a business admin, has set no password
 * yet (becomes `active` at its first sign-in or password reset). `disabled`: refused
 * everywhere, its sessions ended and its API keys refused, until enabled again.
 */
export const UserStatus = z.enum(["active", "invited", "disabled"]);
export type UserStatus = z.infer<typeof UserStatus>;

export const User = z.object({
  user_id: z.string(),
  app_id: AppId,
  business_id: z.string(),
  email: z.string(),
  role: Role,
  /** Records made before statuses existed are `active`. */
  status: UserStatus.default("active"),
  created_at: Timestamp,
  /** The last successful sign-in (password, one-time code or password reset); null before the first. */
  last_sign_in_at: Timestamp.nullable().default(null),
});
export type User = z.infer<typeof User>;
