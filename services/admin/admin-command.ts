import type { z } from "zod";
import { INTERNAL_RPCS, type InternalReply } from "../../shared/nats/index.js";

/** A command-line flag and the request field it fills. */
export interface Flag {
  flag: string;
  field: string;
  /** Placeholder of the value in the usage text; absent for a flag that takes none (a boolean, true when given). */
  value?: string;
  /** One line for the help. */
  help: string;
}

/** The operator RPCs (`INTERNAL_RPCS`), whose commands are what the flags fill. */
export type AdminRpc =
  | "adminAppCreate"
  | "adminBusinessCreate"
  | "adminUserCreate"
  | "adminUserList"
  | "adminUserDisable"
  | "adminUserEnable"
  | "adminUserSetRole"
  | "adminKeysRotate"
  | "adminCreditSet";

/** One operator command: the words that name it, its flags, and the RPC it sends. */
export interface AdminCommand<N extends AdminRpc = AdminRpc> {
  /** The words typed after `npm run admin --`, e.g. `app create`. */
  name: string;
  summary: string;
  /** In usage order. Whether a flag is optional comes from the request schema. */
  flags: readonly Flag[];
  /** The request's `password` comes from a password source (`--password-stdin`, `--password-file`, a prompt), never a flag. */
  takesPassword?: true;
  rpc: N;
  /** The RPC's command schema: what the flags (and the password source) fill. */
  request: z.ZodObject;
  /** The one line printed without `--json`. */
  describe(created: InternalReply<N>): string;
}

/** Types a command by its RPC; the lists hold them as `AdminCommand`. */
export function defineCommand<N extends AdminRpc>(command: Omit<AdminCommand<N>, "request">): AdminCommand {
  return { ...command, request: INTERNAL_RPCS[command.rpc].command } as unknown as AdminCommand;
}
