import type { Command } from "commander";
import { PromptCancelled, TerminalPrompt } from "../../../shared/terminal/index.js";
import type { Tokens } from "../../sdk/src/index.js";
import type { CliContext } from "../context.js";
import { UsageError } from "../exit-codes.js";
import { readStdin } from "../stdin.js";
import { readSession, removeSession, sessionPath, writeSession } from "../session-file.js";

import type { Run } from "../run.js";

interface LoginOptions {
  email?: string;
  passwordStdin?: boolean;
  otp?: boolean;
}

/** The claims of an access token, read without checking it (the server checks it). */
function claimsOf(token: string): Record<string, unknown> {
  try {
    return JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}

async function signIn(ctx: CliContext, options: LoginOptions): Promise<{ email: string; tokens: Tokens }> {
  const interactive = ctx.io.stdin.isTTY === true && options.passwordStdin !== true;
  const prompt = interactive ? new TerminalPrompt(ctx.io.stdin, ctx.io.stderr) : undefined;
  try {
    const email = options.email ?? (await prompt?.ask("E-mail: "));
    if (!email) throw new UsageError("Give --email (there is no terminal to ask on).");
    const client = ctx.anonymousClient();
    if (options.otp) {
      await client.call("requestOtp", { email });
      ctx.note(`A one-time code is on its way to ${email} (if it has an account).`);
      const code = prompt ? await prompt.askSecret("Code: ") : (await readStdin(ctx.io.stdin)).trim();
      return { email, tokens: await client.call("verifyOtp", { email, code: code.trim() }) };
    }
    if (!prompt && options.passwordStdin !== true)
      throw new UsageError("No terminal to ask for the password on: pass it with --password-stdin.");
    const password = prompt
      ? await prompt.askSecret("Password: ")
      : (await readStdin(ctx.io.stdin)).replace(/\r?\n$/, "");
    return { email, tokens: await client.call("login", { email, password }) };
  } finally {
    prompt?.close();
  }
}

export function registerAuthCommands(program: Command, run: Run): void {
  program
    .command("login")
    .description(
      "Sign in with e-mail and password (or a one-time code) and keep the session in the config dir (mode 0600)",
    )
    .option("--email <email>", "the account's e-mail (asked when on a terminal)")
    .option("--password-stdin", "read the password from stdin (for scripts)")
    .option("--otp", "sign in with a one-time code sent by e-mail instead of a password")
    .action(
      run(async (ctx: CliContext, options: LoginOptions) => {
        const target = ctx.target();
        let signedIn: { email: string; tokens: Tokens };
        try {
          signedIn = await signIn(ctx, options);
        } catch (error) {
          if (error instanceof PromptCancelled) throw new UsageError("Cancelled; not signed in.");
          throw error;
        }
        writeSession(ctx.io.env, {
          url: target.url,
          app_id: target.appId,
          email: signedIn.email,
          tokens: signedIn.tokens,
        });
        ctx.print(
          { url: target.url, app_id: target.appId, email: signedIn.email, session_file: sessionPath(ctx.io.env) },
          () => `Signed in to ${target.url} (app ${target.appId}) as ${signedIn.email}.\n`,
        );
      }),
    );

  program
    .command("logout")
    .description("End the stored session on the service and forget it")
    .action(
      run(async (ctx: CliContext) => {
        const session = readSession(ctx.io.env);
        if (!session) {
          ctx.print({ signed_out: false }, () => "Not signed in.\n");
          return;
        }
        // The session ends on the service first; a service that cannot be reached still lets the local copy go.
        await ctx
          .anonymousClient()
          .call("logout", { refresh_token: session.tokens.refresh_token })
          .catch((error: unknown) =>
            ctx.note(
              `The service did not confirm the sign-out (${error instanceof Error ? error.message : String(error)}); the local session is removed anyway.`,
            ),
          );
        removeSession(ctx.io.env);
        ctx.print({ signed_out: true }, () => `Signed out of ${session.url}.\n`);
      }),
    );

  program
    .command("whoami")
    .description("Who the CLI calls as, and where; checks the credential with the service")
    .action(
      run(async (ctx: CliContext) => {
        const target = ctx.target();
        const client = ctx.client();
        const keys = await client.keys.list();
        // Read after the call: it may have refreshed the stored tokens.
        const token =
          target.source === "session"
            ? readSession(ctx.io.env)?.tokens.access_token
            : target.source === "CJS_TOKEN"
              ? ctx.io.env.CJS_TOKEN
              : undefined;
        const claims = token ? claimsOf(token) : {};
        const who = {
          url: target.url,
          app_id: target.appId,
          credential: target.source,
          email: target.source === "session" ? (target.session?.email ?? null) : null,
          user_id: (claims.sub as string | undefined) ?? null,
          business_id: (claims.business_id as string | undefined) ?? null,
          role: (claims.role as string | undefined) ?? null,
          api_keys: keys.items.filter((key) => key.revoked_at === null).length,
        };
        ctx.print(
          who,
          () =>
            [
              `${who.email ?? (who.credential === "CJS_API_KEY" ? "an API key (CJS_API_KEY)" : "a token (CJS_TOKEN)")} on ${who.url} (app ${who.app_id})`,
              who.user_id ? `user ${who.user_id}, ${who.role} of business ${who.business_id}` : null,
              `${who.api_keys} active API key(s)`,
            ]
              .filter((line) => line !== null)
              .join("\n") + "\n",
        );
      }),
    );
}
