import type { Command } from "commander";
import type { IdKind } from "../../../shared/contract/index.js";
import type { ComputeJobsClient } from "../../sdk/src/index.js";
import { idOf } from "../choices.js";
import type { CliContext } from "../context.js";
import type { Run } from "../run.js";

/** `<noun> rm <id>` (or `delete`): deletes one by its id, prints the answer (`--json`) or that it is deleted. */
export function deleteCommand(
  parent: Command,
  run: Run,
  kind: IdKind,
  description: string,
  remove: (client: ComputeJobsClient, id: string) => Promise<unknown>,
  idHelp = `the ${kind} id`,
): void {
  parent
    .command("rm")
    .alias("delete")
    .description(description)
    .argument(`<${kind}>`, idHelp, idOf(kind))
    .action(
      run(async (ctx: CliContext, id: string) => {
        const deleted = await remove(ctx.client(), id);
        ctx.print(deleted, () => `${id} deleted\n`);
      }),
    );
}
