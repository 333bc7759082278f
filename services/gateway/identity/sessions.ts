import { isId } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { JsonBucket } from "../../../shared/nats/index.js";
import { newId, type Clock } from "../../../shared/runtime/index.js";
import type { SessionRecord, UserRecord } from "./records.js";
import { digestsEqual, newSecret, sha256Hex } from "./secrets.js";
import { openSuccessor, sealSuccessor } from "./successor-seal.js";

/** How many spent refresh tokens a session remembers, to recognise a reused one. */
const SPENT_MEMORY = 50;

const INVALID = () => new AppError("auth.refresh_invalid", "The refresh token is not valid; sign in again.");

/** A refresh token is `<session id>.<secret>`: the id finds the record, the secret proves possession. */
function splitToken(token: string): { sessionId: string; secret: string; secretHash: string } | null {
  const dot = token.indexOf(".");
  if (dot <= 0) return null;
  const sessionId = token.slice(0, dot);
  if (!isId("session", sessionId)) return null;
  const secret = token.slice(dot + 1);
  return { sessionId, secret, secretHash: sha256Hex(secret) };
}

export interface SessionOwner {
  app_id: string;
  user_id: string;
  /** The user's `session_generation` as stored now. */
  generation: number;
}

/** The user-record fields that end sessions. */
export type SessionsEnded = Pick<UserRecord, "session_generation" | "session_kept">;

/**
 * Ends every session of the user started so far but `keep` (none when absent), as the
 * fields to write into the user record: a new generation, which sessions started from
 * now on carry. The user record is read on every bearer request and refresh (cached,
 * evicted by the watch on every replica), so one write ends them all at once everywhere,
 * however many there are, with no per-user index of sessions and no clocks compared.
 */
export function endSessionsOfUser(user: SessionsEnded, keep?: string): SessionsEnded {
  return { session_generation: user.session_generation + 1, session_kept: keep ?? null };
}

/** Whether the session was ended by its user's record (see `endSessionsOfUser`). */
export function endedByUser(session: Pick<SessionRecord, "session_id" | "generation">, user: SessionsEnded): boolean {
  return session.generation < user.session_generation && session.session_id !== user.session_kept;
}

/**
 * Sign-in sessions as refresh-token families. Each refresh rotates the token by
 * compare-and-set; a spent token that comes back ends the whole session, because either
 * its holder or a thief is replaying it. One exception, the grace: the token spent by the
 * last refresh, presented again within `graceSeconds` of it, gets the same new token
 * again (two tabs or processes of one session that found the access token expired at
 * once, or a refresh whose answer was lost). docs/decisions/0050-refresh-token-grace.md.
 */
export class Sessions {
  constructor(
    private readonly bucket: JsonBucket<typeof SessionRecord>,
    private readonly clock: Clock,
    private readonly ttlSeconds: number,
    private readonly graceSeconds: number,
  ) {}

  async start(owner: SessionOwner): Promise<{ sessionId: string; refreshToken: string }> {
    const sessionId = newId("ses");
    const secret = newSecret();
    const now = this.clock.now();
    await this.bucket.create(sessionId, {
      session_id: sessionId,
      app_id: owner.app_id,
      user_id: owner.user_id,
      token_hash: sha256Hex(secret),
      generation: owner.generation,
      spent_hashes: [],
      previous_hash: null,
      rotated_at: null,
      successor_sealed: null,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + this.ttlSeconds * 1000).toISOString(),
      ended_at: null,
      end_reason: null,
    });
    return { sessionId, refreshToken: `${sessionId}.${secret}` };
  }

  /** Trades a refresh token for a new one in the same session (or, within the grace, for the one it was traded for). */
  async rotate(token: string, appId: string): Promise<{ session: SessionRecord; refreshToken: string }> {
    const parts = splitToken(token);
    if (!parts) throw INVALID();
    const secret = newSecret();
    const result: { outcome: "rotated" | "again" | "reused" | "invalid"; successor?: string } = { outcome: "invalid" };
    const stored = await this.bucket.mutate(parts.sessionId, (session) => {
      result.outcome = "invalid";
      if (session.app_id !== appId || !this.isLive(session)) return undefined;
      if (digestsEqual(session.token_hash, parts.secretHash)) {
        result.outcome = "rotated";
        result.successor = secret;
        return {
          ...session,
          token_hash: sha256Hex(secret),
          spent_hashes: [...session.spent_hashes, session.token_hash].slice(-SPENT_MEMORY),
          previous_hash: session.token_hash,
          rotated_at: new Date(this.clock.now()).toISOString(),
          successor_sealed: sealSuccessor(secret, parts.secret, parts.sessionId),
        };
      }
      const successor = this.withinGrace(session, parts) ? this.openSuccessor(session, parts) : undefined;
      if (successor !== undefined) {
        result.outcome = "again";
        result.successor = successor;
        return undefined;
      }
      if (session.spent_hashes.some((spent) => digestsEqual(spent, parts.secretHash))) {
        result.outcome = "reused";
        return { ...session, ended_at: new Date(this.clock.now()).toISOString(), end_reason: "refresh_token_reused" };
      }
      return undefined;
    });
    if (!stored || result.successor === undefined || (result.outcome !== "rotated" && result.outcome !== "again"))
      throw INVALID();
    return { session: stored.value, refreshToken: `${parts.sessionId}.${result.successor}` };
  }

  /** Ends the session of a current refresh token; returns its id. */
  async end(token: string, appId: string): Promise<string> {
    const parts = splitToken(token);
    if (!parts) throw INVALID();
    const result = { ended: false };
    await this.bucket.mutate(parts.sessionId, (session) => {
      result.ended = false;
      if (session.app_id !== appId || !this.isLive(session) || !digestsEqual(session.token_hash, parts.secretHash))
        return undefined;
      result.ended = true;
      return { ...session, ended_at: new Date(this.clock.now()).toISOString(), end_reason: "logout" };
    });
    if (!result.ended) throw INVALID();
    return parts.sessionId;
  }

  /** Whether `parts` is the token the last refresh spent, presented again within the grace. */
  private withinGrace(session: SessionRecord, parts: { secretHash: string }): boolean {
    if (session.previous_hash === null || session.rotated_at === null || this.graceSeconds === 0) return false;
    const since = this.clock.now() - Date.parse(session.rotated_at);
    return since >= 0 && since <= this.graceSeconds * 1000 && digestsEqual(session.previous_hash, parts.secretHash);
  }

  /** The current token's secret, opened with the spent one; it also proves the current token is that successor. */
  private openSuccessor(session: SessionRecord, parts: { sessionId: string; secret: string }): string | undefined {
    if (session.successor_sealed === null) return undefined;
    const successor = openSuccessor(session.successor_sealed, parts.secret, parts.sessionId);
    return successor !== undefined && digestsEqual(session.token_hash, sha256Hex(successor)) ? successor : undefined;
  }

  private isLive(session: SessionRecord): boolean {
    return session.ended_at === null && Date.parse(session.expires_at) > this.clock.now();
  }
}
