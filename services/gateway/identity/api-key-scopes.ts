import { grantsScope, type Scope } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { Caller } from "./authenticator.js";

/**
 * Refuses a user's API key that lacks the scope an operation needs (403
 * `auth.scope_missing`). Sessions hold every scope; node keys are kept to the node plane
 * by the authenticator instead.
 */
export function requireScope(caller: Caller | null, scope: Scope | null): void {
  if (caller?.credential.kind !== "api_key") return;
  if (grantsScope(caller.credential.key.scopes, scope)) return;
  throw new AppError(
    "auth.scope_missing",
    `This API key does not hold the scope ${scope}, which this operation needs.`,
    { details: { scope } },
  );
}
