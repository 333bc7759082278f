import type { z } from "zod";
import type { SandboxActionCommand, SandboxActionReply } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import type { BillingContext } from "./billing-context.js";

/** The sandbox checkout page's Pay or Cancel button. */
export function sandboxAct(ctx: BillingContext) {
  return async ({ session_id, action }: z.infer<typeof SandboxActionCommand>): Promise<SandboxActionReply> => {
    if (!ctx.sandbox) throw new AppError("resource.not_found", "The sandbox payment provider is not enabled.");
    return ctx.sandbox.act(session_id, action);
  };
}
