import type { z } from "zod";

/** A command-line flag and the request field it fills. */
export interface Flag {
  flag: string;
  field: string;
  /** Placeholder of the value in the usage text; absent for a flag that takes none (a boolean, true when given). */
  value?: string;
  /** One line for the help. */
  help: string;
}

/** One operator command: the words that name it, its flags, and the RPC it sends. */
export interface AdminCommand<Req extends z.ZodObject = z.ZodObject, Res extends z.ZodType = z.ZodType> {
  /** The words typed after `npm run admin --`, e.g. `app create`. */
  name: string;
  summary: string;
  /** In usage order. Whether a flag is optional comes from the request schema. */
  flags: readonly Flag[];
  /** The request's `password` comes from a password source (`--password-stdin`, `--password-file`, a prompt), never a flag. */
  takesPassword?: true;
  request: Req;
  subject: () => string;
  response: Res;
  /** The one line printed without `--json`. */
  describe(created: z.infer<Res>): string;
}

/** Types a command with its own request and response; the lists hold them as `AdminCommand`. */
export function defineCommand<Req extends z.ZodObject, Res extends z.ZodType>(
  command: AdminCommand<Req, Res>,
): AdminCommand {
  return command as unknown as AdminCommand;
}
