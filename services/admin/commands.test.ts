import { describe, expect, it } from "vitest";
import { parseInvocation, resolveNatsUrl, UsageError } from "./commands.js";

const BUSINESS_ID = "biz_0123456789abcdefghij";

function usageErrorOf(argv: string[]): string {
  try {
    parseInvocation(argv);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error(`expected a usage error for: ${argv.join(" ")}`);
}

describe("parseInvocation", () => {
  it("refuses an unknown command with the usage text", () => {
    const message = usageErrorOf(["app", "delete", "--id", "local"]);
    expect(message).toContain('unknown command "app delete"');
    expect(message).toContain("Usage: npm run admin");
  });

  it("refuses an empty command line", () => {
    expect(usageErrorOf([])).toContain("no command given");
  });

  it("names a missing flag", () => {
    const message = usageErrorOf(["user", "create", "--app", "local", "--business", BUSINESS_ID, "--password", "correct horse battery"]);
    const problems = message.split("\n\n")[0];
    expect(problems).toBe('invalid input for "user create":\n  --email is required');
  });

  it("lists every invalid field with the schema's reason", () => {
    const message = usageErrorOf(["user", "create", "--app", "local", "--business", "acme", "--email", "nope", "--password", "short"]);
    expect(message).toContain("--business: a record id such as `biz_…`");
    expect(message).toContain("--email:");
    expect(message).toContain("--password: at least 12 characters");
  });

  it("refuses a flag that belongs to another command", () => {
    expect(usageErrorOf(["app", "create", "--id", "local", "--name", "Local", "--email", "a@example.com"])).toContain(
      '--email is not an option of "app create"',
    );
  });

  it("refuses an unknown flag and a flag without its value", () => {
    expect(usageErrorOf(["app", "create", "--id", "local", "--colour", "red"])).toContain("--colour");
    expect(usageErrorOf(["app", "create", "--id", "local", "--name"])).toContain("--name");
  });

  it("builds the exact request body of user create, with the schema's default role and lowercased e-mail", () => {
    const invocation = parseInvocation([
      "user", "create", "--app", "local", "--business", BUSINESS_ID, "--email", "Ada@Example.com", "--password", "correct horse battery",
    ]);
    expect(invocation).toMatchObject({ kind: "run", json: false, natsUrl: undefined, command: { name: "user create" } });
    expect(invocation.kind === "run" && invocation.command.subject()).toBe("cjs.admin.user.create");
    expect(invocation.kind === "run" && invocation.body).toEqual({
      app_id: "local",
      business_id: BUSINESS_ID,
      email: "ada@example.com",
      password: "correct horse battery",
      role: "member",
    });
  });

  it("maps --app to app_id for business create and reads the global flags anywhere", () => {
    const invocation = parseInvocation(["--json", "business", "create", "--app", "local", "--name", "Acme", "--nats", "nats://10.0.0.1:4222"]);
    expect(invocation).toMatchObject({
      kind: "run",
      body: { app_id: "local", name: "Acme" },
      json: true,
      natsUrl: "nats://10.0.0.1:4222",
    });
  });

  it("answers --help with the usage of the command named, or of all commands", () => {
    expect(parseInvocation(["user", "create", "--help"])).toEqual({
      kind: "help",
      text: expect.stringContaining("user create --app ID --business BID --email EMAIL --password PASSWORD [--role admin|member]"),
    });
    expect(parseInvocation(["user", "create", "--help"])).toMatchObject({ text: expect.not.stringContaining("business create") });
    expect(parseInvocation(["--help"])).toMatchObject({ kind: "help", text: expect.stringContaining("business create --app ID --name NAME") });
  });
});

describe("resolveNatsUrl", () => {
  it("prefers --nats, then NATS_URL, then the local default", () => {
    expect(resolveNatsUrl("nats://a:1", { NATS_URL: "nats://b:2" })).toBe("nats://a:1");
    expect(resolveNatsUrl(undefined, { NATS_URL: "nats://b:2" })).toBe("nats://b:2");
    expect(resolveNatsUrl(undefined, {})).toBe("nats://127.0.0.1:4222");
  });
});
