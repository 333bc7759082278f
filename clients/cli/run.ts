import type { Command } from "commander";
import { CliContext, type GlobalOptions } from "./context.js";
import type { CliIo } from "./output.js";

/** Turns a command's action into commander's handler: commander passes the arguments, the options, then the command. */
export type Run = <A extends unknown[]>(
  action: (ctx: CliContext, ...args: A) => Promise<void>,
) => (...args: unknown[]) => Promise<void>;

export function runnerFor(io: CliIo): Run {
  return <A extends unknown[]>(action: (ctx: CliContext, ...args: A) => Promise<void>) =>
    async (...args: unknown[]) => {
      const command = args.at(-1) as Command;
      const ctx = new CliContext(io, command.optsWithGlobals<GlobalOptions>());
      try {
        await action(ctx, ...(args.slice(0, -1) as A));
      } catch (error) {
        throw ctx.explain(error);
      }
    };
}
