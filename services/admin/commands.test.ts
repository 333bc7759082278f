import { describe, expect, it } from "vitest";
import { rpcSubject } from "../../shared/nats/index.js";
import { UsageError } from "../../shared/terminal/index.js";
import { parseInvocation, resolveNatsUrl, withPassword } from "./commands.js";

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
    expect(message).toContain("unknown command 'delete'");
    expect(message).toContain("Usage: npm run admin -- app");
  });

  it("refuses an empty command line", () => {
    expect(usageErrorOf([])).toContain("no command given");
  });

  it("names a missing flag", () => {
    const message = usageErrorOf(["user", "create", "--app", "local", "--business", BUSINESS_ID, "--password-stdin"]);
    const problems = message.split("\n\n")[0];
    expect(problems).toBe('invalid input for "user create":\n  --email is required');
  });

  it("lists every invalid field with the schema's reason", () => {
    const message = usageErrorOf([
      "user",
      "create",
      "--app",
      "local",
      "--business",
      "acme",
      "--email",
      "nope",
      "--role",
      "boss",
    ]);
    expect(message).toContain("--business: a business id: `biz_` and 20 letters or digits");
    expect(message).toContain("--email:");
    expect(message).toContain("--role:");
  });

  it("refuses a flag that belongs to another command, with the command's usage", () => {
    const message = usageErrorOf(["app", "create", "--id", "local", "--name", "Local", "--email", "a@example.com"]);
    expect(message).toContain("unknown option '--email'");
    expect(message).toContain("Usage: npm run admin -- app create --id ID --name NAME");
  });

  it("refuses an unknown flag and a flag without its value", () => {
    expect(usageErrorOf(["app", "create", "--id", "local", "--colour", "red"])).toContain("--colour");
    expect(usageErrorOf(["app", "create", "--id", "local", "--name"])).toContain("--name");
  });

  it("builds the request body of user create without the password, with the schema's default role and lowercased e-mail", () => {
    const invocation = parseInvocation([
      "user",
      "create",
      "--app",
      "local",
      "--business",
      BUSINESS_ID,
      "--email",
      "Ada@Example.com",
    ]);
    expect(invocation).toMatchObject({
      kind: "run",
      json: false,
      natsUrl: undefined,
      command: { name: "user create" },
      password: { from: "prompt" },
    });
    expect(invocation.kind === "run" && rpcSubject(invocation.command.rpc)).toBe("cjs.admin.user.create");
    expect(invocation.kind === "run" && invocation.body).toEqual({
      app_id: "local",
      business_id: BUSINESS_ID,
      email: "ada@example.com",
      role: "member",
    });
    if (invocation.kind !== "run") throw new Error("expected a command to run");
    expect(withPassword(invocation.command, invocation.body, "correct horse battery")).toEqual({
      app_id: "local",
      business_id: BUSINESS_ID,
      email: "ada@example.com",
      password: "correct horse battery",
      role: "member",
    });
  });

  it("maps --app to app_id for business create and reads the global flags anywhere", () => {
    const invocation = parseInvocation([
      "--json",
      "business",
      "create",
      "--app",
      "local",
      "--name",
      "Acme",
      "--nats",
      "nats://10.0.0.1:4222",
    ]);
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
      text: expect.stringContaining(
        "user create --app ID --business BID --email EMAIL [--role admin|member] [--password-stdin | --password-file PATH]",
      ),
    });
    expect(parseInvocation(["user", "create", "--help"])).toMatchObject({
      text: expect.not.stringContaining("business create"),
    });
    expect(parseInvocation(["--help"])).toMatchObject({
      kind: "help",
      text: expect.stringContaining("business create --app ID --name NAME"),
    });
  });
});

describe("passwords never on the command line", () => {
  const USER = ["user", "create", "--app", "local", "--business", BUSINESS_ID, "--email", "ada@example.com"];

  it("refuses --password with the reason and the sources to use instead", () => {
    const message = usageErrorOf([...USER, "--password", "correct horse battery"]);
    expect(message).toContain("--password is refused");
    expect(message).toContain("visible to every user of the machine (ps)");
    expect(message).toContain("--password-stdin");
    expect(message).toContain("--password-file PATH");
    expect(usageErrorOf(["bootstrap", "--password=correct horse battery"])).toContain("--password is refused");
    expect(usageErrorOf([...USER, "--password"])).toContain("--password is refused");
  });

  it("takes the password from stdin, from a file, or else from the terminal prompt", () => {
    expect(parseInvocation([...USER, "--password-stdin"])).toMatchObject({ kind: "run", password: { from: "stdin" } });
    expect(parseInvocation([...USER, "--password-file", "/run/secrets/pw"])).toMatchObject({
      kind: "run",
      password: { from: "file", path: "/run/secrets/pw" },
    });
    expect(parseInvocation(USER)).toMatchObject({ kind: "run", password: { from: "prompt" } });
  });

  it("refuses two password sources at once, and a password source on a command that takes none", () => {
    expect(usageErrorOf([...USER, "--password-stdin", "--password-file", "/tmp/pw"])).toContain(
      "--password-stdin and --password-file exclude each other",
    );
    expect(usageErrorOf(["app", "create", "--id", "local", "--name", "Local", "--password-stdin"])).toContain(
      "unknown option '--password-stdin'",
    );
  });

  it("checks the password read from its source against the schema", () => {
    const invocation = parseInvocation([...USER, "--password-stdin"]);
    if (invocation.kind !== "run") throw new Error("expected a command to run");
    expect(() => withPassword(invocation.command, invocation.body, "short")).toThrow(
      /password: at least 12 characters/,
    );
  });
});

describe("bootstrap", () => {
  it("reads --file and the password source, and leaves both to prompts when absent", () => {
    expect(parseInvocation(["bootstrap", "--file", "bootstrap.json", "--password-stdin", "--json"])).toEqual({
      kind: "bootstrap",
      file: "bootstrap.json",
      password: { from: "stdin" },
      json: true,
      natsUrl: undefined,
    });
    expect(parseInvocation(["bootstrap"])).toMatchObject({ kind: "bootstrap", file: undefined, password: undefined });
  });

  it("refuses the flags of other commands and is listed in the usage text", () => {
    expect(usageErrorOf(["bootstrap", "--app", "acme"])).toContain("unknown option '--app'");
    expect(parseInvocation(["--help"])).toMatchObject({
      text: expect.stringContaining("bootstrap [--file FILE] [--password-stdin | --password-file PATH]"),
    });
  });
});

describe("credit set", () => {
  it("builds the request of credit set with the amount as a number", () => {
    const invocation = parseInvocation(["credit", "set", "--business", BUSINESS_ID, "--amount", "12.5"]);
    expect(invocation).toMatchObject({
      kind: "run",
      command: { name: "credit set" },
      body: { business_id: BUSINESS_ID, amount: 12.5 },
    });
    expect(invocation.kind === "run" && rpcSubject(invocation.command.rpc)).toBe("cjs.admin.credit.set");
    expect(parseInvocation(["credit", "set", "--business", BUSINESS_ID, "--amount", "0"])).toMatchObject({
      body: { amount: 0 },
    });
  });

  it("refuses an amount that is not a plain decimal, is negative or has more than six decimals", () => {
    expect(usageErrorOf(["credit", "set", "--business", BUSINESS_ID, "--amount", "lots"])).toContain(
      "--amount: a decimal number such as 100 or 2.5",
    );
    expect(usageErrorOf(["credit", "set", "--business", BUSINESS_ID, "--amount=-5"])).toContain("--amount: at least 0");
    expect(usageErrorOf(["credit", "set", "--business", BUSINESS_ID, "--amount", "1.1234567"])).toContain(
      "--amount: at most six decimal places",
    );
    expect(usageErrorOf(["credit", "set", "--business", BUSINESS_ID, "--amount", "1e3"])).toContain("--amount:");
  });

  it("names the missing flags and a malformed business id", () => {
    expect(usageErrorOf(["credit", "set", "--business", BUSINESS_ID])).toContain("--amount is required");
    expect(usageErrorOf(["credit", "set", "--business", "acme", "--amount", "5"])).toContain(
      "--business: a business id: `biz_` and 20 letters or digits",
    );
  });

  it("is listed in the usage text", () => {
    expect(parseInvocation(["--help"])).toMatchObject({
      text: expect.stringContaining("credit set --business BID --amount AMOUNT"),
    });
  });
});

describe("business create --operator", () => {
  const BUSINESS = ["business", "create", "--app", "local", "--name", "Acme Ops"];

  it("is a flag: given, the business is the operator's; absent, it is not", () => {
    expect(parseInvocation([...BUSINESS, "--operator"])).toMatchObject({ kind: "run", body: { operator: true } });
    expect(parseInvocation(BUSINESS)).toMatchObject({ kind: "run", body: { operator: false } });
  });

  it("takes no value", () => {
    expect(usageErrorOf([...BUSINESS, "--operator", "true"])).toContain("too many arguments");
  });
});

describe("resolveNatsUrl", () => {
  it("prefers --nats, then NATS_URL, then make dev's server on CJS_NATS_PORT (4222 by default)", () => {
    const both = { NATS_URL: "nats://b:2", CJS_NATS_PORT: "4299" };
    expect(resolveNatsUrl("nats://a:1", both)).toEqual({ url: "nats://a:1", local: false });
    expect(resolveNatsUrl(undefined, both)).toEqual({ url: "nats://b:2", local: false });
    expect(resolveNatsUrl(undefined, { CJS_NATS_PORT: "4299" })).toEqual({ url: "nats://127.0.0.1:4299", local: true });
    expect(resolveNatsUrl(undefined, {})).toEqual({ url: "nats://127.0.0.1:4222", local: true });
  });

  it("refuses a CJS_NATS_PORT that is not a port, naming it", () => {
    expect(() => resolveNatsUrl(undefined, { CJS_NATS_PORT: "lots" })).toThrow(/CJS_NATS_PORT/);
  });

  it("refuses a --nats or NATS_URL that is not a NATS server list, naming which", () => {
    expect(() => resolveNatsUrl("not a url", {})).toThrow(/--nats: "not a url" is not a NATS server URL/);
    expect(() => resolveNatsUrl(undefined, { NATS_URL: "nats://:99999" })).toThrow(
      /NATS_URL: "nats:\/\/:99999" is not a NATS server URL/,
    );
  });
});
