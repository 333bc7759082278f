import type { Caller } from "./authenticator.js";
import type { ApiKeyRecord } from "./records.js";

/** Whether a key is one the caller minted in this app: the only keys a user lists, renames or revokes (a node's key is rotated instead). */
export function isOwnUserKey(
  key: Pick<ApiKeyRecord, "kind" | "user_id" | "app_id">,
  caller: Pick<Caller, "user_id" | "app_id">,
): boolean {
  return key.kind === "user" && key.user_id === caller.user_id && key.app_id === caller.app_id;
}
