import { randomBytes } from "node:crypto";
import { RPC_ROUTES } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { otpKey } from "../identity/otp.js";
import { hashPassword } from "../identity/passwords.js";
import { requireBusinessAdmin } from "../identity/users-changes.js";
import { newUserRecord, storeNewUser, userSummary } from "../identity/users.js";

/**
 * `POST /api/compute/users/invite` (business admins): a user of the caller's business,
 * `invited`, whose password is a random one nobody knows. The e-mailed code is a reset
 * code: with it the invitee sets a password (`password/reset/confirm`); a sign-in code
 * they ask for themselves signs them in. Either makes them `active`.
 */
export function inviteUser(gw: GatewayContext): RpcHandler<typeof RPC_ROUTES.inviteUser> {
  return async ({ email, role }, { caller, log }) => {
    requireBusinessAdmin(caller);
    const send = gw.sendOtp;
    if (!send)
      throw new AppError("service.unavailable", "Invitations by e-mail are not configured on this service.", {
        retryAfterSeconds: 3600,
      });
    const passwordHash = await hashPassword(randomBytes(32).toString("base64url"));
    const record = newUserRecord(
      {
        app_id: caller.app_id,
        business_id: caller.business_id,
        email,
        role,
        status: "invited",
        password_hash: passwordHash,
      },
      gw.clock.now(),
    );
    await storeNewUser(gw.store, record);
    const code = await gw.otps.issue(otpKey("password_reset", caller.app_id, email));
    send(email, code, "password_reset").catch((error: unknown) =>
      log.error({ err: error }, "could not deliver an invitation code"),
    );
    return userSummary(record);
  };
}
