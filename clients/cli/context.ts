import {
  type ClientOptions,
  ComputeJobsClient,
  type Credentials,
  sessionIsOver,
  type Tokens,
} from "../sdk/src/index.js";
import { SignedOut, UsageError } from "./exit-codes.js";
import { colorsFor, printJson, type CliIo, type Colors } from "./output.js";
import { readSession, removeSessionIf, writeSession, type StoredSession } from "./session-file.js";
import { CLI_VERSION } from "./version.js";

/** `make dev`'s gateway and app: what a first try on a laptop talks to. */
export const DEFAULT_URL = "http://localhost:8080";
export const DEFAULT_APP_ID = "local";

/** The global options every command sees. */
export interface GlobalOptions {
  url?: string;
  app?: string;
  json?: boolean;
}

/** Where to call and with what: the flags, then CJS_URL, CJS_APP_ID, CJS_API_KEY or CJS_TOKEN, then the stored session. */
export interface Target {
  url: string;
  appId: string;
  credentials: Credentials | undefined;
  /** Where the credential came from, for `whoami`. */
  source: "CJS_API_KEY" | "CJS_TOKEN" | "session" | "none";
  session: StoredSession | null;
}

/** A wait in words: `0.5 s`, `12 s`. */
export function seconds(ms: number): string {
  return `${ms < 10_000 ? (ms / 1000).toFixed(1) : Math.round(ms / 1000)} s`;
}

/** The gateway's address as given, checked before any request: an http(s) URL, no trailing slash. */
function gatewayUrl(value: string, from: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${from} "${value}" is not a URL: give the gateway's address, such as ${DEFAULT_URL}.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new UsageError(`${from} "${value}" is not an http:// or https:// URL (such as ${DEFAULT_URL}).`);
  return value.replace(/\/+$/, "");
}

export function resolveTarget(io: CliIo, options: GlobalOptions): Target {
  const { env } = io;
  const session = readSession(env);
  const [given, from] =
    options.url !== undefined
      ? [options.url, "--url"]
      : env.CJS_URL
        ? [env.CJS_URL, "CJS_URL"]
        : session
          ? [session.url, "The stored session's URL"]
          : [DEFAULT_URL, "The default URL"];
  const url = gatewayUrl(given, from);
  const appId = options.app ?? env.CJS_APP_ID ?? session?.app_id ?? DEFAULT_APP_ID;
  if (env.CJS_API_KEY) return { url, appId, credentials: { apiKey: env.CJS_API_KEY }, source: "CJS_API_KEY", session };
  if (env.CJS_TOKEN) return { url, appId, credentials: { accessToken: env.CJS_TOKEN }, source: "CJS_TOKEN", session };
  // A session is used only where it was made: another URL or app would refuse its tokens anyway.
  if (session && session.url === url && session.app_id === appId) {
    return { url, appId, credentials: { tokens: session.tokens }, source: "session", session };
  }
  return { url, appId, credentials: undefined, source: "none", session };
}

/**
 * The stored session as the SDK's credentials. Each new pair is written back to the
 * session file at once (atomically); before a refresh the file is read again, so a pair
 * another `cjs` refreshed meanwhile is used instead of spending the old refresh token twice.
 * `held` hears each pair this process holds.
 */
function sessionCredentials(
  env: NodeJS.ProcessEnv,
  session: StoredSession,
  held: (tokens: Tokens) => void,
): Credentials {
  return {
    tokens: session.tokens,
    onTokens: (tokens) => {
      held(tokens);
      writeSession(env, { ...session, tokens });
    },
    loadTokens: () => {
      const stored = readSession(env);
      if (stored === null || stored.url !== session.url || stored.app_id !== session.app_id) return undefined;
      held(stored.tokens);
      return stored.tokens;
    },
  };
}

/** What a command's action gets: the terminal, the chosen output, and a client. */
export class CliContext {
  readonly colors: Colors;
  /** The stored session's newest pair this process knows, once a command uses the session. */
  private sessionHeld: Tokens | undefined;

  constructor(
    readonly io: CliIo,
    readonly options: GlobalOptions,
  ) {
    this.colors = colorsFor(io);
  }

  get json(): boolean {
    return this.options.json === true;
  }

  target(): Target {
    return resolveTarget(this.io, this.options);
  }

  /** A client with the resolved credential; refuses early, with the way out, when there is none. */
  client(): ComputeJobsClient {
    const target = this.target();
    if (target.credentials === undefined) {
      throw new UsageError(
        `Not signed in to ${target.url} (app ${target.appId}). Run \`cjs login\`, or set CJS_API_KEY (or CJS_TOKEN).`,
      );
    }
    const { session } = target;
    let credentials = target.credentials;
    if (target.source === "session" && session !== null) {
      this.sessionHeld = session.tokens;
      credentials = sessionCredentials(this.io.env, session, (tokens) => (this.sessionHeld = tokens));
    }
    return new ComputeJobsClient({ ...this.clientOptions(target), credentials });
  }

  /**
   * The failure as the command reports it: a session the service says is over is
   * `SignedOut`, and its file is removed, unless another `cjs` has stored a newer pair since.
   */
  explain(error: unknown): unknown {
    if (this.sessionHeld === undefined || !sessionIsOver(error)) return error;
    removeSessionIf(this.io.env, (stored) => stored.tokens.refresh_token === this.sessionHeld?.refresh_token);
    return new SignedOut(`${error.code}: ${error.message}`);
  }

  /** A client without a credential (sign-in operations). */
  anonymousClient(): ComputeJobsClient {
    const target = this.target();
    return new ComputeJobsClient(this.clientOptions(target));
  }

  /** Where and as what the clients call; each retry is told on stderr, so a wait is never silent. */
  private clientOptions(target: Target): ClientOptions {
    return {
      baseUrl: target.url,
      appId: target.appId,
      userAgent: `cjs-cli/${CLI_VERSION}`,
      onRetry: ({ retry, delayMs, error }) =>
        this.note(
          this.colors.dim(`${error.code}: ${error.message}; trying again in ${seconds(delayMs)} (retry ${retry})`),
        ),
    };
  }

  /** `--json`: the value as JSON; otherwise the human rendering. */
  print(value: unknown, human: () => string): void {
    if (this.json) printJson(this.io, value);
    else this.io.stdout.write(human());
  }

  /** A note for people on stderr (never mixed into stdout, which scripts read). */
  note(text: string): void {
    this.io.stderr.write(`${text}\n`);
  }
}
