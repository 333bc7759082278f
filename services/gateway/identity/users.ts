import type { Role, User, UserSummary } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { kvKey } from "../../../shared/nats/index.js";
import { newId } from "../../../shared/runtime/index.js";
import type { IdentityStore } from "./identity-store.js";
import type { UserRecord } from "./records.js";

/** The key of the e-mail index entry that makes an address unique within an app. */
export function userEmailKey(appId: string, email: string): string {
  return kvKey(appId, email.toLowerCase());
}

/** The key of a user's entry in its business's index. */
export function businessUserKey(user: { app_id: string; business_id: string; user_id: string }): string {
  return kvKey(user.app_id, user.business_id, user.user_id);
}

export async function findUserByEmail(store: IdentityStore, appId: string, email: string): Promise<UserRecord | null> {
  const index = await store.userEmails.get(userEmailKey(appId, email));
  if (!index) return null;
  const user = await store.users.get(index.value.user_id);
  return user && user.value.app_id === appId ? user.value : null;
}

/** A disabled user signs in nowhere and none of its credentials but its nodes' keys work. */
export function isDisabled(user: Pick<UserRecord, "status">): boolean {
  return user.status === "disabled";
}

/** The role a credential acts with: never more than the user's role now. */
export function lowerRole(minted: Role, current: Role): Role {
  return minted === "admin" && current === "admin" ? "admin" : "member";
}

/** The record as callers and operators see it: no hash, no session bookkeeping. */
export function publicUser(record: UserRecord): User {
  const { user_id, app_id, business_id, email, role, status, created_at, last_sign_in_at } = record;
  return { user_id, app_id, business_id, email, role, status, created_at, last_sign_in_at };
}

export function userSummary(record: UserRecord): UserSummary {
  const { user_id, email, role, status, created_at, last_sign_in_at } = record;
  return { user_id, email, role, status, created_at, last_sign_in_at };
}

/** A new user's record: no sign-in yet, no session ended. */
export function newUserRecord(
  fields: Pick<UserRecord, "app_id" | "business_id" | "email" | "role" | "status" | "password_hash">,
  now: number,
): UserRecord {
  return {
    ...fields,
    user_id: newId("usr"),
    created_at: new Date(now).toISOString(),
    last_sign_in_at: null,
    session_generation: 0,
    session_kept: null,
  };
}

/**
 * Stores a new user. The e-mail index entry is created first, by KV create, so two
 * concurrent creates of one address cannot both succeed; the business index entry next,
 * so a crash before the record leaves an entry that listing skips.
 */
export async function storeNewUser(store: IdentityStore, user: UserRecord): Promise<void> {
  try {
    await store.userEmails.create(userEmailKey(user.app_id, user.email), { user_id: user.user_id });
  } catch (error) {
    if (error instanceof AppError && error.code === "resource.already_exists") {
      throw new AppError(
        "resource.already_exists",
        `A user with e-mail ${user.email} already exists in application ${user.app_id}.`,
      );
    }
    throw error;
  }
  await store.businessUsers.put(businessUserKey(user), {});
  await store.users.create(user.user_id, user);
}

/**
 * The users of one business (or, without `businessId`, of the whole app) in the order of
 * their ids, from `after` on, at most `limit`, read through the business index.
 */
export async function usersOf(
  store: IdentityStore,
  scope: { appId: string; businessId?: string | undefined },
  page: { after?: string | undefined; limit?: number } = {},
): Promise<{ users: UserRecord[]; more: boolean }> {
  const filter =
    scope.businessId === undefined ? `${kvKey(scope.appId)}.>` : `${kvKey(scope.appId, scope.businessId)}.*`;
  const ids = (await store.businessUsers.keys(filter))
    .map((key) => key.slice(key.lastIndexOf(".") + 1))
    .filter((id) => page.after === undefined || id > page.after)
    .sort();
  const wanted = page.limit === undefined ? ids : ids.slice(0, page.limit);
  const records = await Promise.all(wanted.map((id) => store.users.get(id)));
  const users = records.flatMap((entry) =>
    entry &&
    entry.value.app_id === scope.appId &&
    (scope.businessId === undefined || entry.value.business_id === scope.businessId)
      ? [entry.value]
      : [],
  );
  return { users, more: wanted.length < ids.length };
}

/**
 * Adds the business index entries of users stored before the index existed. Cheap once
 * done: two listings of keys, and a read only for a user still missing.
 */
export async function indexUsersOfBusinesses(store: IdentityStore): Promise<number> {
  const indexed = new Set((await store.businessUsers.keys()).map((key) => key.slice(key.lastIndexOf(".") + 1)));
  let added = 0;
  for (const userId of await store.users.keys()) {
    if (indexed.has(userId)) continue;
    const user = await store.users.get(userId);
    if (!user) continue;
    await store.businessUsers.put(businessUserKey(user.value), {});
    added += 1;
  }
  return added;
}
