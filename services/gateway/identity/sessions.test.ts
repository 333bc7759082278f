import { describe, expect, it } from "vitest";
import { endedByUser, endSessionsOfUser } from "./sessions.js";

const AT = Date.parse("2026-11-24T01:00:00.000Z");
const session = (id: string, createdAt: number) => ({ session_id: id, created_at: new Date(createdAt).toISOString() });

describe("endedByUser", () => {
  it("ends nothing while the user has ended no sessions", () => {
    expect(endedByUser(session("ses_a", AT), { sessions_ended_at: null, session_kept: null })).toBe(false);
  });

  it("ends the sessions started until the moment, including at it, and none started later", () => {
    const ended = endSessionsOfUser(AT);
    expect(endedByUser(session("ses_a", AT - 60_000), ended)).toBe(true);
    expect(endedByUser(session("ses_b", AT), ended)).toBe(true);
    expect(endedByUser(session("ses_c", AT + 1), ended)).toBe(false);
  });

  it("keeps the one session named, and only it", () => {
    const ended = endSessionsOfUser(AT, "ses_kept");
    expect(endedByUser(session("ses_kept", AT - 60_000), ended)).toBe(false);
    expect(endedByUser(session("ses_other", AT - 60_000), ended)).toBe(true);
  });
});
