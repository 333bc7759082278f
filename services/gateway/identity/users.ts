import { kvKey } from "../../../shared/nats/index.js";
import type { IdentityStore } from "./identity-store.js";
import type { UserRecord } from "./records.js";

/** The key of the e-mail index entry that makes an address unique within an app. */
export function userEmailKey(appId: string, email: string): string {
  return kvKey(appId, email.toLowerCase());
}

export async function findUserByEmail(store: IdentityStore, appId: string, email: string): Promise<UserRecord | null> {
  const index = await store.userEmails.get(userEmailKey(appId, email));
  if (!index) return null;
  const user = await store.users.get(index.value.user_id);
  return user && user.value.app_id === appId ? user.value : null;
}
