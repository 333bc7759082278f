import { ComputeJobsClient, type Credentials } from "../sdk/src/index.js";
import { UsageError } from "./exit-codes.js";
import { colorsFor, printJson, type CliIo, type Colors } from "./output.js";
import { readSession, writeSession, type StoredSession } from "./session-file.js";

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

export function resolveTarget(io: CliIo, options: GlobalOptions): Target {
  const { env } = io;
  const session = readSession(env);
  const url = (options.url ?? env.CJS_URL ?? session?.url ?? DEFAULT_URL).replace(/\/+$/, "");
  const appId = options.app ?? env.CJS_APP_ID ?? session?.app_id ?? DEFAULT_APP_ID;
  if (env.CJS_API_KEY) return { url, appId, credentials: { apiKey: env.CJS_API_KEY }, source: "CJS_API_KEY", session };
  if (env.CJS_TOKEN) return { url, appId, credentials: { accessToken: env.CJS_TOKEN }, source: "CJS_TOKEN", session };
  // A session is used only where it was made: another URL or app would refuse its tokens anyway.
  if (session && session.url === url && session.app_id === appId) {
    const credentials: Credentials = {
      tokens: session.tokens,
      onTokens: (tokens) => writeSession(env, { ...session, tokens }),
    };
    return { url, appId, credentials, source: "session", session };
  }
  return { url, appId, credentials: undefined, source: "none", session };
}

/** What a command's action gets: the terminal, the chosen output, and a client. */
export class CliContext {
  readonly colors: Colors;

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
    return new ComputeJobsClient({
      baseUrl: target.url,
      appId: target.appId,
      credentials: target.credentials,
      userAgent: "cjs-cli",
    });
  }

  /** A client without a credential (sign-in operations). */
  anonymousClient(): ComputeJobsClient {
    const target = this.target();
    return new ComputeJobsClient({ baseUrl: target.url, appId: target.appId, userAgent: "cjs-cli" });
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
