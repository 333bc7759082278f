import { ApiError } from "./errors.js";

/** A signed-in session's tokens, as sign-in and refresh return them. */
export interface Tokens {
  access_token: string;
  refresh_token: string;
}

/**
 * A signed-in session's tokens and where they are kept. `onTokens` hears every new pair,
 * to keep it where the old one was (the CLI writes its session file, the portal its tab's
 * storage). `loadTokens`, when given, reads the kept pair again just before a refresh:
 * another process or tab of the same session may have refreshed first, and its newer pair
 * is taken instead of trading a refresh token that is already spent. `onEnded` hears that
 * the service says the session is over (`sessionIsOver`): the refused refresh token is
 * never sent again, and each later call that needs a refresh fails with the same error
 * without a request, until a newer pair is set or kept (`loadTokens`).
 */
export interface SessionCredentials {
  tokens: Tokens;
  onTokens?: (tokens: Tokens) => void | Promise<void>;
  loadTokens?: () => Tokens | undefined | Promise<Tokens | undefined>;
  onEnded?: (error: ApiError) => void | Promise<void>;
}

/**
 * Whether the service says a session is over: its refresh token refused (spent, revoked, or
 * the session ended), or a session's access token refused as invalid. Only a new sign-in
 * goes on from there.
 */
export function sessionIsOver(error: unknown): error is ApiError {
  return (
    error instanceof ApiError &&
    (error.code === "auth.refresh_invalid" || (error.status === 401 && error.code === "auth.invalid_credentials"))
  );
}

/**
 * How the client authenticates: an API key (`X-API-Key`), a session's tokens
 * (`Authorization: Bearer`, refreshed by the client), or a bare access token (never refreshed).
 */
export type Credentials = { apiKey: string } | SessionCredentials | { accessToken: string };

/** Seconds before its `exp` at which an access token is refreshed ahead of use. */
const REFRESH_AHEAD_SECONDS = 30;

/** Base64url to text with what browsers and Node both have (`atob`), so the SDK runs in the portal too. */
function decodeBase64Url(text: string): string {
  const base64 = text.replaceAll("-", "+").replaceAll("_", "/");
  const binary = atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, "="));
  return new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)));
}

/** The numeric claims of a JWT that the client reads (the server checks the token; the client only plans refreshes). */
function timeClaims(token: string): { exp?: number; iat?: number } {
  const payload = token.split(".")[1];
  if (payload === undefined) return {};
  try {
    const claims = JSON.parse(decodeBase64Url(payload)) as { exp?: unknown; iat?: unknown };
    return {
      ...(typeof claims.exp === "number" ? { exp: claims.exp } : {}),
      ...(typeof claims.iat === "number" ? { iat: claims.iat } : {}),
    };
  } catch {
    return {};
  }
}

/** The `exp` claim of a JWT, in epoch seconds; undefined when it cannot be read (the server decides then). */
export function tokenExpiry(token: string): number | undefined {
  return timeClaims(token).exp;
}

function isSession(credentials: Credentials | undefined): credentials is SessionCredentials {
  return credentials !== undefined && "tokens" in credentials;
}

/**
 * The credential headers of each request, and the refresh of a session's tokens. One
 * refresh at a time per client, however many requests need it: a refresh token is spent
 * by its use, and the gateway ends a session whose spent token comes back (past its short
 * grace, docs/api.md "Refresh tokens and sessions").
 */
export class CredentialHolder {
  /** What `set` was given; a refresh started for other credentials does not replace these. */
  private given: Credentials | undefined;
  /** The same, with the session's newest pair. */
  private credentials: Credentials | undefined;
  private refreshing: Promise<void> | undefined;
  /** The refresh token the service refused as a session that is over, and its answer: it is not sent again. */
  private refused: { refreshToken: string; error: ApiError } | undefined;
  /** The server's clock minus ours, from the `iat` of the last pair received: a client clock set wrong does not refresh on every call. */
  private skewMs = 0;

  constructor(
    credentials: Credentials | undefined,
    private readonly refresher: (refreshToken: string) => Promise<Tokens>,
    private readonly now: () => number = Date.now,
  ) {
    this.given = credentials;
    this.credentials = credentials;
  }

  set(credentials: Credentials | undefined): void {
    this.given = credentials;
    this.credentials = credentials;
    this.refreshing = undefined;
  }

  get current(): Credentials | undefined {
    return this.credentials;
  }

  /** The headers to send; refreshes first when the access token is about to expire. */
  async headers(): Promise<Record<string, string>> {
    const credentials = this.credentials;
    if (credentials === undefined) return {};
    if ("apiKey" in credentials) return { "x-api-key": credentials.apiKey };
    if ("accessToken" in credentials) return { authorization: `Bearer ${credentials.accessToken}` };
    if (this.expiresSoon(credentials.tokens.access_token)) await this.refresh(credentials.tokens.access_token);
    const fresh = this.credentials;
    return isSession(fresh) ? { authorization: `Bearer ${fresh.tokens.access_token}` } : {};
  }

  /** Whether a refused token can be refreshed (a session's tokens; not a bare access token or a key). */
  get canRefresh(): boolean {
    return isSession(this.credentials);
  }

  /**
   * Trades the refresh token for a new pair. `stale` is the access token the caller found
   * expired: when it has been replaced meanwhile (another request's refresh), there is
   * nothing to do. Concurrent callers share the refresh in flight.
   */
  refresh(stale?: string): Promise<void> {
    const credentials = this.credentials;
    if (this.refreshing !== undefined) return this.refreshing;
    if (!isSession(credentials)) return Promise.resolve();
    if (stale !== undefined && credentials.tokens.access_token !== stale) return Promise.resolve();
    // Started on the next microtask, so the promise is in place before any code of the refresh runs.
    const owner = this.given;
    const refreshing = Promise.resolve()
      .then(() => this.refreshOnce(owner, credentials))
      .finally(() => {
        if (this.refreshing === refreshing) this.refreshing = undefined;
      });
    this.refreshing = refreshing;
    return refreshing;
  }

  private async refreshOnce(owner: Credentials | undefined, credentials: SessionCredentials): Promise<void> {
    let tokens = credentials.tokens;
    const kept = await credentials.loadTokens?.();
    if (kept !== undefined && kept.refresh_token !== tokens.refresh_token) {
      // Another process or tab refreshed first: its pair is the session's newest.
      tokens = kept;
      if (!this.replace(owner, tokens) || !this.expiresSoon(tokens.access_token)) return;
    }
    if (this.refused?.refreshToken === tokens.refresh_token) throw this.refused.error;
    let fresh: Tokens;
    try {
      fresh = await this.refresher(tokens.refresh_token);
    } catch (error) {
      if (sessionIsOver(error) && this.given === owner) {
        this.refused = { refreshToken: tokens.refresh_token, error };
        await credentials.onEnded?.(error);
      }
      throw error;
    }
    const { iat } = timeClaims(fresh.access_token);
    if (iat !== undefined) this.skewMs = iat * 1000 - this.now();
    if (this.replace(owner, fresh)) await credentials.onTokens?.(fresh);
  }

  /** Puts `tokens` in place of the session's pair, unless other credentials were set meanwhile; answers whether it did. */
  private replace(owner: Credentials | undefined, tokens: Tokens): boolean {
    const current = this.credentials;
    if (this.given !== owner || !isSession(current)) return false;
    this.credentials = { ...current, tokens };
    return true;
  }

  private expiresSoon(accessToken: string): boolean {
    const expiry = tokenExpiry(accessToken);
    return expiry !== undefined && (expiry - REFRESH_AHEAD_SECONDS) * 1000 <= this.now() + this.skewMs;
  }
}
