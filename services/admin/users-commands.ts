import { AdminListUsersResponse, User } from "../../shared/contract/index.js";
import { type AdminCommand, defineCommand } from "./admin-command.js";

function describeUser(user: User): string {
  const signedIn = user.last_sign_in_at === null ? "never signed in" : `last signed in ${user.last_sign_in_at}`;
  return `${user.user_id} <${user.email}> ${user.role} ${user.status} in business ${user.business_id} (${signedIn})`;
}

const APP = { flag: "app", field: "app_id", value: "ID", help: "the application" } as const;
const USER = { flag: "user", field: "user_id", value: "UID", help: "the user (usr_…)" } as const;

/**
 * `users …`: answered by one gateway replica. A change takes effect at once on every
 * replica (each evicts the user from its cache through its KV watch). Unlike a business
 * admin, the operator may disable or demote a business's last admin.
 */
export const usersCommands: readonly AdminCommand[] = [
  defineCommand({
    name: "users list",
    summary: "List the users of an application, or of one business of it: id, e-mail, role, status, last sign-in.",
    flags: [APP, { flag: "business", field: "business_id", value: "BID", help: "only this business (biz_…)" }],
    rpc: "adminUserList",
    describe: (listed: AdminListUsersResponse) =>
      listed.items.length === 0 ? "no users" : listed.items.map(describeUser).join("\n"),
  }),
  defineCommand({
    name: "users disable",
    summary:
      "Refuse a user everywhere at once: their sessions end and their API keys stop working (their nodes' keys keep working).",
    flags: [APP, USER],
    rpc: "adminUserDisable",
    describe: (user: User) => `disabled ${describeUser(user)}`,
  }),
  defineCommand({
    name: "users enable",
    summary: "Let a disabled user sign in again; their API keys work again.",
    flags: [APP, USER],
    rpc: "adminUserEnable",
    describe: (user: User) => `enabled ${describeUser(user)}`,
  }),
  defineCommand({
    name: "users set-role",
    summary: "Make a user an admin or a member of their business, at once everywhere.",
    flags: [APP, USER, { flag: "role", field: "role", value: "admin|member", help: "the new role" }],
    rpc: "adminUserSetRole",
    describe: (user: User) => `set the role of ${describeUser(user)}`,
  }),
];
