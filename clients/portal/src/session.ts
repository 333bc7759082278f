import { ComputeJobsClient, type Tokens } from "../../sdk/src/index.js";

/**
 * The signed-in session. The access token lives only in this module's memory (inside the
 * SDK client); the refresh token is kept in `sessionStorage` so a reload of this tab stays
 * signed in, and it is gone when the tab closes. Never a cookie, never `localStorage`.
 */
const REFRESH_KEY = "cjs.refresh_token";
const APP_KEY = "cjs.app_id";

let client: ComputeJobsClient | undefined;
const listeners = new Set<() => void>();

function notify(): void {
  for (const listener of listeners) listener();
}

/** Runs `listener` whenever the session starts or ends. */
export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The app id of the last sign-in in this browser (not a secret: it is sent in every request). */
/** The app to sign in to: `?app=` in the address (as make dev's banner links it), else the last one used here. */
export function rememberedAppId(): string {
  return new URLSearchParams(location.search).get("app") ?? localStorage.getItem(APP_KEY) ?? "";
}

function keep(tokens: Tokens): void {
  sessionStorage.setItem(REFRESH_KEY, tokens.refresh_token);
}

function anonymous(appId: string): ComputeJobsClient {
  return new ComputeJobsClient({ baseUrl: location.origin, appId, userAgent: "portal" });
}

/** Starts a session from a fresh token pair: the SDK refreshes it on `auth.token_expired`. */
function start(appId: string, fresh: ComputeJobsClient, tokens: Tokens): void {
  localStorage.setItem(APP_KEY, appId);
  keep(tokens);
  fresh.useCredentials({ tokens, onTokens: keep });
  client = fresh;
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

/** After a reload: trades the tab's refresh token for a new pair; false when there is none or it is spent. */
export async function resume(): Promise<boolean> {
  const refreshToken = sessionStorage.getItem(REFRESH_KEY);
  const appId = rememberedAppId();
  if (refreshToken === null || appId === "") return false;
  const fresh = anonymous(appId);
  try {
    start(appId, fresh, await fresh.call("refresh", { refresh_token: refreshToken }));
    return true;
  } catch {
    sessionStorage.removeItem(REFRESH_KEY);
    return false;
  }
}

export async function signOut(): Promise<void> {
  const refreshToken = sessionStorage.getItem(REFRESH_KEY);
  sessionStorage.removeItem(REFRESH_KEY);
  const ended = client;
  client = undefined;
  notify();
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
