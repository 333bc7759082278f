import { z } from "zod";
import { NewPassword, User } from "./admin.js";
import { Email, Role } from "./common.js";
import { AppId, BusinessId, UserId } from "./ids.js";

/** `POST /api/compute/account/password/change`: the signed-in user's own password. */
export const ChangePasswordRequest = z.strictObject({
  current_password: z.string().min(1).max(1024),
  /** At least 12 characters, as at user creation. */
  new_password: NewPassword,
});
export type ChangePasswordRequest = z.infer<typeof ChangePasswordRequest>;

export const ChangePasswordResponse = z.object({ password_changed: z.literal(true) });
export type ChangePasswordResponse = z.infer<typeof ChangePasswordResponse>;

export const RequestPasswordResetRequest = z.strictObject({ email: Email });
export type RequestPasswordResetRequest = z.infer<typeof RequestPasswordResetRequest>;

/** Always the same answer, whether or not the e-mail has an account. */
export const RequestPasswordResetResponse = z.object({
  /** Seconds until a code sent now expires. */
  expires_in: z.number().int().positive(),
});
export type RequestPasswordResetResponse = z.infer<typeof RequestPasswordResetResponse>;

export const ConfirmPasswordResetRequest = z.strictObject({
  email: Email,
  /** The six-digit code e-mailed by `password/reset/request` or by an invitation (a sign-in code does not work here). */
  code: z.string().regex(/^\d{6}$/, "six digits"),
  new_password: NewPassword,
});
export type ConfirmPasswordResetRequest = z.infer<typeof ConfirmPasswordResetRequest>;

export const ConfirmPasswordResetResponse = z.object({ password_reset: z.literal(true) });
export type ConfirmPasswordResetResponse = z.infer<typeof ConfirmPasswordResetResponse>;

/** A user as a business admin sees it in `users/*` answers. */
export const UserSummary = User.pick({
  user_id: true,
  email: true,
  role: true,
  status: true,
  created_at: true,
  last_sign_in_at: true,
});
export type UserSummary = z.infer<typeof UserSummary>;

export const ListUsersRequest = z.strictObject({
  /** Page size, 1 to 500 (default 100). */
  limit: z.number().int().min(1).max(500).default(100),
  /** `next_cursor` of the previous page: a user id. */
  cursor: UserId.optional(),
});
export type ListUsersRequest = z.infer<typeof ListUsersRequest>;

export const ListUsersResponse = z.object({
  /** The business's users in the order of their ids (stable across pages). */
  items: z.array(UserSummary),
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: z.string().nullable(),
});
export type ListUsersResponse = z.infer<typeof ListUsersResponse>;

export const InviteUserRequest = z.strictObject({
  email: Email,
  role: Role.default("member"),
});
export type InviteUserRequest = z.infer<typeof InviteUserRequest>;

export const UserRef = z.strictObject({ user_id: UserId });
export type UserRef = z.infer<typeof UserRef>;

export const SetUserRoleRequest = z.strictObject({ user_id: UserId, role: Role });
export type SetUserRoleRequest = z.infer<typeof SetUserRoleRequest>;

/** Operator command `users list` (NATS only): one business's users, or the whole app's. */
export const AdminListUsersRequest = z.strictObject({ app_id: AppId, business_id: BusinessId.optional() });
export type AdminListUsersRequest = z.infer<typeof AdminListUsersRequest>;

export const AdminListUsersResponse = z.object({ items: z.array(User) });
export type AdminListUsersResponse = z.infer<typeof AdminListUsersResponse>;

/** Operator commands `users disable` and `users enable` (NATS only). */
export const AdminUserRef = z.strictObject({ app_id: AppId, user_id: UserId });
export type AdminUserRef = z.infer<typeof AdminUserRef>;

/** Operator command `users set-role` (NATS only). */
export const AdminSetUserRoleRequest = AdminUserRef.extend({ role: Role });
export type AdminSetUserRoleRequest = z.infer<typeof AdminSetUserRoleRequest>;
