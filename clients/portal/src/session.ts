import { ComputeJobsClient, sessionIsOver, type Tokens } from "../../sdk/src/index.js";

/**
 * The signed-in session. The access token lives only in this module's memory (inside the
 * SDK client); the refresh token is kept in `sessionStorage` so a reload of this tab stays
 * signed in, and it is gone when the tab closes. Never a cookie, never `localStorage`.
 *
 * The SDK refreshes the pair (one refresh at a time in this tab) and hands each new pair
 * to `keep`, which stores the refresh token at once, so a reload never starts from a spent
 * one. Tabs of one session (a duplicated tab shares its storage) tell one another each new
 * pair over a `BroadcastChannel` named after the session; a tab about to refresh takes a
 * newer pair heard from another tab instead (`loadTokens`), and a sign-out ends the
 * session in every tab. Two tabs refreshing at the very same moment are covered by the
 * gateway's grace (docs/api.md, "Refresh tokens and sessions"). A session the service
 * says is over (signed out elsewhere, revoked) ends in this tab at its refusal: the
 * sign-in page says so, and nothing polls with it any more. Each tab finds out at its own
 * refresh (a refusal is not told to the others: a tab that missed a pair must not end them).
 */
const REFRESH_KEY = "cjs.refresh_token";
const APP_KEY = "cjs.app_id";

/** What tabs of one session tell one another. */
type TabMessage = { kind: "tokens"; tokens: Tokens } | { kind: "signed-out" };

let client: ComputeJobsClient | undefined;
/** The newest pair this tab knows of, its own or another tab's. */
let newest: Tokens | undefined;
let channel: BroadcastChannel | undefined;
/** Whether the last session ended because the service said it was over (not by signing out here). */
let endedByService = false;
const listeners = new Set<() => void>();

function notify(): void {
  for (const listener of listeners) listener();
}

/** Runs `listener` whenever the session starts or ends. */
export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The app to sign in to: `?app=` in the address (as make dev's banner links it), else the last one used here. */
export function rememberedAppId(): string {
  return new URLSearchParams(location.search).get("app") ?? localStorage.getItem(APP_KEY) ?? "";
}

/** The session id a refresh token starts with (`ses_….secret`): not a secret, it names the tabs' channel. */
function sessionIdOf(tokens: Tokens): string {
  return tokens.refresh_token.split(".")[0] ?? "";
}

function store(tokens: Tokens): void {
  newest = tokens;
  sessionStorage.setItem(REFRESH_KEY, tokens.refresh_token);
}

/** Keeps a new pair of this tab and tells the session's other tabs. */
function keep(tokens: Tokens): void {
  store(tokens);
  channel?.postMessage({ kind: "tokens", tokens } satisfies TabMessage);
}

/** Listens to the other tabs of the session, from now until it ends here. */
function join(tokens: Tokens): void {
  channel?.close();
  channel =
    typeof BroadcastChannel === "function" ? new BroadcastChannel(`cjs.session.${sessionIdOf(tokens)}`) : undefined;
  channel?.addEventListener("message", (event: MessageEvent<TabMessage>) => {
    if (event.data.kind === "tokens") store(event.data.tokens);
    else end();
  });
}

function anonymous(appId: string): ComputeJobsClient {
  return new ComputeJobsClient({ baseUrl: location.origin, appId, userAgent: "portal" });
}

/** Starts a session from a fresh token pair: the SDK refreshes it as it expires. */
function start(appId: string, fresh: ComputeJobsClient, tokens: Tokens): void {
  localStorage.setItem(APP_KEY, appId);
  endedByService = false;
  join(tokens);
  keep(tokens);
  fresh.useCredentials({
    tokens,
    onTokens: keep,
    loadTokens: () => newest,
    onEnded: () => {
      if (client !== fresh) return;
      endedByService = true;
      end();
    },
  });
  client = fresh;
  notify();
}

/** Whether the sign-in page is shown because the service ended the session (signed out elsewhere, or revoked). */
export function sessionEndedByService(): boolean {
  return endedByService;
}

/** Forgets the session in this tab. */
function end(): void {
  channel?.close();
  channel = undefined;
  newest = undefined;
  sessionStorage.removeItem(REFRESH_KEY);
  client = undefined;
  notify();
}

export async function signInWithPassword(appId: string, email: string, password: string): Promise<void> {
  const fresh = anonymous(appId);
  start(appId, fresh, await fresh.call("login", { email, password }));
}

export async function requestCode(appId: string, email: string): Promise<void> {
  await anonymous(appId).call("requestOtp", { email });
}

export async function signInWithCode(appId: string, email: string, code: string): Promise<void> {
  const fresh = anonymous(appId);
  start(appId, fresh, await fresh.call("verifyOtp", { email, code }));
}

/**
 * After a reload: trades the tab's refresh token for a new pair; false when there is none
 * or it cannot be traded now. Only a session the service says is over forgets the token
 * (a service out of reach leaves it for the next reload).
 */
export async function resume(): Promise<boolean> {
  const refreshToken = sessionStorage.getItem(REFRESH_KEY);
  const appId = rememberedAppId();
  if (refreshToken === null || appId === "") return false;
  const fresh = anonymous(appId);
  try {
    start(appId, fresh, await fresh.call("refresh", { refresh_token: refreshToken }));
    return true;
  } catch (error) {
    if (sessionIsOver(error)) sessionStorage.removeItem(REFRESH_KEY);
    return false;
  }
}

/** Ends the session on the service and in every tab of it. */
export async function signOut(): Promise<void> {
  const refreshToken = newest?.refresh_token ?? sessionStorage.getItem(REFRESH_KEY);
  const ended = client;
  channel?.postMessage({ kind: "signed-out" } satisfies TabMessage);
  end();
  if (refreshToken !== null && ended !== undefined)
    await ended.call("logout", { refresh_token: refreshToken }).catch(() => undefined);
}

/** The signed-in client; pages are only shown with a session. */
export function api(): ComputeJobsClient {
  if (client === undefined) throw new Error("Not signed in.");
  return client;
}

export function isSignedIn(): boolean {
  return client !== undefined;
}
