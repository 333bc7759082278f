import { describe, expect, it } from "vitest";
import { endedByUser, endSessionsOfUser } from "./sessions.js";

const FRESH_USER = { session_generation: 0, session_kept: null };
const session = (id: string, generation: number) => ({ session_id: id, generation });

describe("endedByUser", () => {
  it("ends nothing while the user has ended no sessions (sessions of older versions included)", () => {
    expect(endedByUser(session("ses_a", 0), FRESH_USER)).toBe(false);
  });

  it("ends the sessions started before, and none started after", () => {
    const ended = endSessionsOfUser(FRESH_USER);
    expect(ended).toEqual({ session_generation: 1, session_kept: null });
    expect(endedByUser(session("ses_before", 0), ended)).toBe(true);
    expect(endedByUser(session("ses_after", ended.session_generation), ended)).toBe(false);
  });

  it("keeps the one session named, and only it, until the next end", () => {
    const ended = endSessionsOfUser(FRESH_USER, "ses_kept");
    expect(endedByUser(session("ses_kept", 0), ended)).toBe(false);
    expect(endedByUser(session("ses_other", 0), ended)).toBe(true);
    const endedAgain = endSessionsOfUser(ended, "ses_new");
    expect(endedByUser(session("ses_kept", 0), endedAgain)).toBe(true);
    expect(endedByUser(session("ses_new", 1), endedAgain)).toBe(false);
  });
});
