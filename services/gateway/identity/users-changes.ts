import type { Role } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { Caller } from "./authenticator.js";
import type { UserRecord } from "./records.js";
import { endSessionsOfUser } from "./sessions.js";
import { isDisabled, usersOf } from "./users.js";

export type UserChange = { kind: "disable" } | { kind: "enable" } | { kind: "set_role"; role: Role };

/** Where the target must be: a business admin reaches their own business, the operator a whole app. */
export interface UserScope {
  app_id: string;
  business_id?: string | undefined;
}

/** Business-admin-only operations refuse members. */
export function requireBusinessAdmin(caller: Caller): void {
  if (caller.role !== "admin")
    throw new AppError("permission.denied", "Only an admin of the business can manage its users.");
}

function isActiveAdmin(user: Pick<UserRecord, "role" | "status">): boolean {
  return user.role === "admin" && user.status === "active";
}

/** The changed record, or undefined when the change is already in place. */
function applied(user: UserRecord, change: UserChange): UserRecord | undefined {
  switch (change.kind) {
    case "disable":
      // Disabling ends every session, so enabling later does not bring old ones back.
      return isDisabled(user)
        ? undefined
        : {
            ...user,
            status: "disabled",
            status_before_disable: user.status === "invited" ? "invited" : "active",
            ...endSessionsOfUser(user),
          };
    case "enable":
      return isDisabled(user) ? { ...user, status: user.status_before_disable ?? "active" } : undefined;
    case "set_role":
      return user.role === change.role ? undefined : { ...user, role: change.role };
  }
}

async function activeAdminsOf(gw: GatewayContext, user: UserRecord): Promise<UserRecord[]> {
  const { users } = await usersOf(gw.store, { appId: user.app_id, businessId: user.business_id });
  return users.filter(isActiveAdmin);
}

function lastAdmin(): AppError {
  return new AppError(
    "user.last_admin",
    "The business would be left without an active admin; make another user admin first.",
  );
}

/**
 * Applies a change to a user of the scope (another tenant's user is not found). A business
 * admin (`actor`) may not disable themselves nor leave the business without an active admin;
 * the operator (no actor) may, e.g. to lock out a compromised business. Two admins demoting
 * each other at once are caught after the write: a change that left no active admin is
 * undone and refused, so at least one of the two stays.
 */
export async function changeUser(
  gw: GatewayContext,
  scope: UserScope,
  userId: string,
  change: UserChange,
  actor?: Caller,
): Promise<UserRecord> {
  const found = await gw.store.users.get(userId);
  const inScope = (user: UserRecord) =>
    user.app_id === scope.app_id && (scope.business_id === undefined || user.business_id === scope.business_id);
  if (!found || !inScope(found.value))
    throw new AppError("resource.not_found", "No user with this id in your business.");
  if (actor && change.kind === "disable" && actor.user_id === userId) {
    throw new AppError(
      "user.cannot_disable_self",
      "You cannot disable your own account; another admin of the business must.",
    );
  }
  const guarded = actor !== undefined;
  const removesAdmin = (before: UserRecord, after: UserRecord) => isActiveAdmin(before) && !isActiveAdmin(after);

  let removed: UserRecord | undefined;
  const stored = await gw.store.users.mutate(
    userId,
    async (current) => {
      removed = undefined;
      const next = applied(current, change);
      if (next === undefined) return undefined;
      if (guarded && removesAdmin(current, next)) {
        if ((await activeAdminsOf(gw, current)).every(({ user_id }) => user_id === userId)) throw lastAdmin();
        removed = current;
      }
      return next;
    },
    found,
  );
  gw.authenticator.forgetUser(userId);
  if (!stored) throw new AppError("resource.not_found", "No user with this id in your business.");
  if (removed !== undefined && (await activeAdminsOf(gw, stored.value)).length === 0) {
    const before = removed;
    await gw.store.users.mutate(userId, (current) =>
      current.role === stored.value.role && current.status === stored.value.status
        ? { ...current, role: before.role, status: before.status }
        : undefined,
    );
    gw.authenticator.forgetUser(userId);
    throw lastAdmin();
  }
  return stored.value;
}
