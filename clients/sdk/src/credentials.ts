/** A signed-in session's tokens, as sign-in and refresh return them. */
export interface Tokens {
  access_token: string;
  refresh_token: string;
}

/**
 * How the client authenticates: an API key (`X-API-Key`), or a session's tokens
 * (`Authorization: Bearer`), refreshed by the client when the access token expires.
 * `onTokens` hears every new pair, to keep them (the CLI writes them to its config file).
 */
export type Credentials =
  | { apiKey: string }
  | { tokens: Tokens; onTokens?: (tokens: Tokens) => void | Promise<void> }
  | { accessToken: string };

/** Seconds before its `exp` at which an access token is refreshed ahead of use. */
const REFRESH_AHEAD_SECONDS = 30;

/** Base64url to text with what browsers and Node both have (`atob`), so the SDK runs in the portal too. */
function decodeBase64Url(text: string): string {
  const base64 = text.replaceAll("-", "+").replaceAll("_", "/");
  const binary = atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, "="));
  return new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)));
}

/** The `exp` claim of a JWT, in epoch seconds; undefined when it cannot be read (the server decides then). */
export function tokenExpiry(token: string): number | undefined {
  const payload = token.split(".")[1];
  if (payload === undefined) return undefined;
  try {
    const claims = JSON.parse(decodeBase64Url(payload)) as { exp?: unknown };
    return typeof claims.exp === "number" ? claims.exp : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The credential headers of each request, and the refresh of a session's tokens: one
 * refresh at a time however many requests need it (a refresh token is spent by its use,
 * so two refreshes with one token would end the session).
 */
export class CredentialHolder {
  private credentials: Credentials | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(
    credentials: Credentials | undefined,
    private readonly refresher: (refreshToken: string) => Promise<Tokens>,
    private readonly now: () => number = Date.now,
  ) {
    this.credentials = credentials;
  }

  set(credentials: Credentials | undefined): void {
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
    const expiry = tokenExpiry(credentials.tokens.access_token);
    if (expiry !== undefined && expiry - REFRESH_AHEAD_SECONDS <= this.now() / 1000) await this.refresh();
    const fresh = this.credentials;
    return fresh !== undefined && "tokens" in fresh ? { authorization: `Bearer ${fresh.tokens.access_token}` } : {};
  }

  /** Whether a refused token can be refreshed (a session's tokens; not a bare access token or a key). */
  get canRefresh(): boolean {
    return this.credentials !== undefined && "tokens" in this.credentials;
  }

  /** Trades the refresh token for a new pair; concurrent callers share one refresh. */
  refresh(): Promise<void> {
    this.refreshing ??= this.refreshOnce().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async refreshOnce(): Promise<void> {
    const credentials = this.credentials;
    if (credentials === undefined || !("tokens" in credentials)) return;
    const tokens = await this.refresher(credentials.tokens.refresh_token);
    this.credentials = { ...credentials, tokens };
    await credentials.onTokens?.(tokens);
  }
}
