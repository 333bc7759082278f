import { describe, expect, it } from "vitest";
import { rpcSubject } from "../../shared/nats/index.js";
import { UsageError } from "../../shared/terminal/index.js";
import { parseInvocation, usage } from "./commands.js";

const USER_ID = "usr_0123456789abcdefghij";
const BUSINESS_ID = "biz_0123456789abcdefghij";

describe("users commands", () => {
  it("list sends the app and, when given, the business on cjs.admin.user.list", () => {
    const invocation = parseInvocation(["users", "list", "--app", "local", "--business", BUSINESS_ID, "--json"]);
    expect(invocation).toMatchObject({ kind: "run", json: true, body: { app_id: "local", business_id: BUSINESS_ID } });
    expect(invocation.kind === "run" && rpcSubject(invocation.command.rpc)).toBe("cjs.admin.user.list");
    expect(parseInvocation(["users", "list", "--app", "local"])).toMatchObject({
      kind: "run",
      body: { app_id: "local" },
    });
  });

  it("disable, enable and set-role name the user and take no password", () => {
    for (const verb of ["disable", "enable"]) {
      const invocation = parseInvocation(["users", verb, "--app", "local", "--user", USER_ID]);
      expect(invocation).toMatchObject({
        kind: "run",
        body: { app_id: "local", user_id: USER_ID },
        password: undefined,
      });
      expect(invocation.kind === "run" && rpcSubject(invocation.command.rpc)).toBe(`cjs.admin.user.${verb}`);
    }
    const setRole = parseInvocation(["users", "set-role", "--app", "local", "--user", USER_ID, "--role", "admin"]);
    expect(setRole).toMatchObject({ kind: "run", body: { app_id: "local", user_id: USER_ID, role: "admin" } });
    expect(setRole.kind === "run" && rpcSubject(setRole.command.rpc)).toBe("cjs.admin.user.set-role");
  });

  it("refuses a malformed user id, a missing role and a role that is not admin or member, naming the flag", () => {
    expect(() => parseInvocation(["users", "disable", "--app", "local", "--user", "ada"])).toThrow(
      /--user: a user id: `usr_` and 20 letters or digits/,
    );
    expect(() => parseInvocation(["users", "set-role", "--app", "local", "--user", USER_ID])).toThrow(
      /--role is required/,
    );
    expect(() =>
      parseInvocation(["users", "set-role", "--app", "local", "--user", USER_ID, "--role", "owner"]),
    ).toThrow(UsageError);
    expect(() => parseInvocation(["users", "enable", "--app", "local", "--user", USER_ID, "--role", "admin"])).toThrow(
      /unknown option '--role'/,
    );
  });

  it("are listed in the usage text with their flags", () => {
    const text = usage();
    expect(text).toContain("users list --app ID [--business BID]");
    expect(text).toContain("users set-role --app ID --user UID --role admin|member");
    expect(parseInvocation(["users", "disable", "--help"])).toMatchObject({
      kind: "help",
      text: expect.stringContaining("users disable --app ID --user UID"),
    });
  });
});
