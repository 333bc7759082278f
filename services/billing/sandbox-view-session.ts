import type { z } from "zod";
import type { SandboxSessionCommand, SandboxSessionView } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import type { BillingContext } from "./billing-context.js";

/** What the sandbox checkout page shows for a session. */
export function sandboxViewSession(ctx: BillingContext) {
  return async ({ session_id }: z.infer<typeof SandboxSessionCommand>): Promise<SandboxSessionView> => {
    if (!ctx.sandbox) throw new AppError("resource.not_found", "The sandbox payment provider is not enabled.");
    return ctx.sandbox.viewSession(session_id);
  };
}
