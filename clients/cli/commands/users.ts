import type { Command } from "commander";
import { PromptCancelled, TerminalPrompt } from "../../../shared/terminal/index.js";
import type { RpcResponse } from "../../sdk/src/index.js";
import type { CliContext } from "../context.js";
import { UsageError } from "../exit-codes.js";
import { table, timeText } from "../output.js";
import type { Run } from "../run.js";
import { readStdin } from "../stdin.js";
import { choiceArgument, choiceOption, idOf } from "../choices.js";
import { Role } from "../../../shared/contract/index.js";

type UserSummary = RpcResponse<"listUsers">["items"][number];

/** Asks for secrets on a terminal; reads them one per line from stdin otherwise. */
async function secrets(ctx: CliContext, questions: string[]): Promise<string[]> {
  if (ctx.io.stdin.isTTY !== true) {
    const lines = (await readStdin(ctx.io.stdin)).split(/\r?\n/);
    if (lines.length < questions.length || lines.slice(0, questions.length).some((line) => line === "")) {
      throw new UsageError(
        `No terminal to ask on: send ${questions.length} line(s) on stdin (${questions.map((question) => question.replace(/: $/, "")).join(", ")}).`,
      );
    }
    return lines.slice(0, questions.length);
  }
  const prompt = new TerminalPrompt(ctx.io.stdin, ctx.io.stderr);
  try {
    const answers: string[] = [];
    for (const question of questions) answers.push(await prompt.askSecret(question));
    return answers;
  } catch (error) {
    if (error instanceof PromptCancelled) throw new UsageError("Cancelled; nothing was changed.");
    throw error;
  } finally {
    prompt.close();
  }
}

export function registerAccountCommands(program: Command, run: Run): void {
  const account = program
    .command("account")
    .description("Your own account: change the password, reset a forgotten one");

  account
    .command("password")
    .description(
      "Change your password (asks for the current and the new one; on stdin, one per line, without a terminal). Your other sessions end",
    )
    .action(
      run(async (ctx: CliContext) => {
        const [current, next, again] = await secrets(ctx, [
          "Current password: ",
          "New password: ",
          ...(ctx.io.stdin.isTTY === true ? ["New password again: "] : []),
        ]);
        if (again !== undefined && again !== next)
          throw new UsageError("The two new passwords differ; nothing was changed.");
        await ctx.client().account.changePassword({ current_password: current!, new_password: next! });
        ctx.print({ password_changed: true }, () => "Password changed; your other sessions are signed out.\n");
      }),
    );

  account
    .command("reset")
    .description(
      "Reset a forgotten password: e-mails a code, then asks for it and the new password (or give --code and the password on stdin)",
    )
    .requiredOption("--email <email>", "the account's e-mail")
    .option("--code <code>", "the six-digit code from the e-mail (skips sending a new one)")
    .action(
      run(async (ctx: CliContext, options: { email: string; code?: string }) => {
        const client = ctx.anonymousClient();
        let code = options.code;
        if (code === undefined) {
          await client.account.requestPasswordReset(options.email);
          ctx.note(`A code is on its way to ${options.email} (if it has an account).`);
          if (ctx.io.stdin.isTTY !== true) return;
          [code] = await secrets(ctx, ["Code: "]);
        }
        const [password] = await secrets(ctx, ["New password: "]);
        await client.account.confirmPasswordReset({
          email: options.email,
          code: code!.trim(),
          new_password: password!,
        });
        ctx.print({ password_reset: true }, () => "Password set; sign in with it (`cjs login`).\n");
      }),
    );
}

export function registerUserCommands(program: Command, run: Run): void {
  const users = program
    .command("users")
    .description("The users of your business (business admins): list, invite, disable, enable, set a role");

  users
    .command("ls")
    .alias("list")
    .description("Every user of the business")
    .action(
      run(async (ctx: CliContext) => {
        const items: UserSummary[] = [];
        for await (const user of ctx.client().users.all()) items.push(user);
        ctx.print({ items }, () =>
          table(
            ["USER", "E-MAIL", "ROLE", "STATUS", "CREATED", "LAST SIGN-IN"],
            items.map((user) => [
              user.user_id,
              user.email,
              user.role,
              user.status === "disabled" ? ctx.colors.red(user.status) : user.status,
              timeText(user.created_at),
              timeText(user.last_sign_in_at),
            ]),
            ctx.colors,
          ),
        );
      }),
    );

  users
    .command("invite")
    .description("Make a user in your business and e-mail them a code to set their password")
    .argument("<email>", "their e-mail")
    .addOption(choiceOption("--role <role>", "their role", Role.options).default("member"))
    .action(
      run(async (ctx: CliContext, email: string, options: { role: string }) => {
        const user = await ctx.client().users.invite({ email, role: options.role as Role });
        ctx.print(user, () => `${user.user_id} ${user.email} invited as ${user.role}\n`);
      }),
    );

  for (const [name, description] of [
    ["disable", "Disable a user: their sessions and API keys stop working at once"],
    ["enable", "Enable a disabled user again"],
  ] as const) {
    users
      .command(name)
      .description(description)
      .argument("<user>", "the user id (usr_…)", idOf("user"))
      .action(
        run(async (ctx: CliContext, userId: string) => {
          const user = await ctx.client().users[name](userId);
          ctx.print(user, () => `${user.user_id} ${user.email} ${user.status}\n`);
        }),
      );
  }

  users
    .command("set-role")
    .description("Make a user an admin or a member (at once, on every replica)")
    .argument("<user>", "the user id (usr_…)", idOf("user"))
    .addArgument(choiceArgument("<role>", "their new role", Role.options))
    .action(
      run(async (ctx: CliContext, userId: string, roleText: string) => {
        const user = await ctx.client().users.setRole(userId, roleText as Role);
        ctx.print(user, () => `${user.user_id} ${user.email} is ${user.role}\n`);
      }),
    );
}
