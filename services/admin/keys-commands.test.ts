import { describe, expect, it } from "vitest";
import { UsageError } from "../../shared/terminal/index.js";
import { parseInvocation } from "./commands.js";

describe("keys rotate", () => {
  it("sends the kind and, when given, the seconds the old key stays as a number", () => {
    expect(parseInvocation(["keys", "rotate", "--kind", "jwt"])).toMatchObject({ kind: "run", body: { kind: "jwt" } });
    expect(parseInvocation(["keys", "rotate", "--kind", "url", "--keep-seconds", "0"])).toMatchObject({
      kind: "run",
      body: { kind: "url", keep_seconds: 0 },
    });
  });

  it("refuses another kind or seconds that are not a whole number, naming the flag", () => {
    expect(() => parseInvocation(["keys", "rotate", "--kind", "smtp"])).toThrow(UsageError);
    expect(() => parseInvocation(["keys", "rotate", "--kind", "jwt", "--keep-seconds", "-5"])).toThrow(
      /--keep-seconds/,
    );
    expect(() => parseInvocation(["keys", "rotate"])).toThrow(/--kind is required/);
  });
});
