import { kvKey } from "../../../shared/nats/index.js";
import type { TokenPair } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { GuardKey } from "./login-guard.js";
import type { UserRecord } from "./records.js";
import { isDisabled } from "./users.js";

/** Issues the access token of a session for a user. */
export async function accessTokenFor(gw: GatewayContext, user: UserRecord, sessionId: string): Promise<string> {
  return gw.tokens.issue({
    sub: user.user_id,
    app_id: user.app_id,
    business_id: user.business_id,
    role: user.role,
    sid: sessionId,
  });
}

/**
 * Starts a session for a user and returns its first token pair. The sign-in is noted in
 * the user's record, and makes an invited user active; a user disabled meanwhile gets a
 * session that every request refuses.
 */
export async function signIn(gw: GatewayContext, user: UserRecord): Promise<TokenPair> {
  const now = new Date(gw.clock.now()).toISOString();
  const stored = await gw.store.users.mutate(user.user_id, (current) =>
    isDisabled(current) ? undefined : { ...current, status: "active", last_sign_in_at: now },
  );
  // The generation as written: a change that ended the user's sessions before this write ends none started after it.
  const generation = (stored?.value ?? user).session_generation;
  const { sessionId, refreshToken } = await gw.sessions.start({
    app_id: user.app_id,
    user_id: user.user_id,
    generation,
  });
  return {
    access_token: await accessTokenFor(gw, user, sessionId),
    refresh_token: refreshToken,
    token_type: "Bearer",
    expires_in: gw.tokens.ttlSeconds,
  };
}

/** The login guard's counters: the account (per app and e-mail) first, then the client address. */
export function guardKeys(
  gw: GatewayContext,
  appId: string,
  email: string,
  ip: string,
): [account: GuardKey, address: GuardKey] {
  const { config } = gw;
  const lockSeconds = config.CJS_LOGIN_LOCK_SECONDS;
  return [
    {
      key: kvKey("acct", appId, email),
      policy: {
        slowAfterFailures: config.CJS_LOGIN_SLOW_AFTER_FAILURES,
        lockAfterFailures: config.CJS_LOGIN_LOCK_AFTER_FAILURES,
        lockSeconds,
      },
    },
    {
      key: kvKey("addr", ip),
      policy: {
        slowAfterFailures: config.CJS_LOGIN_ADDRESS_SLOW_AFTER_FAILURES,
        lockAfterFailures: config.CJS_LOGIN_ADDRESS_LOCK_AFTER_FAILURES,
        lockSeconds,
      },
    },
  ];
}
